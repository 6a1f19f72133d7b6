"""Marks (docs/rules.md §15, "Marks"): a moderator's silent, site-wide mark on an account."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.urls import reverse
from django.utils import timezone

from ladder.membership import ladder_join
from ladder.models import MarkKind, PlayerMark
from ladder.moderation import marks
from ladder.pages import marks as mark_pages
from ladder.standings.ladders import ladder_list_with_activity
from ladder.standings.leaderboard import ladder_leaderboard
from ladder.standings.nightly import leaderboard_snapshot, local_midnight
from notifications.models import Notification
from ratings.models import PlayerRating
from tests.factories import LadderFactory, UserFactory, bulk_users, member

pytestmark = pytest.mark.django_db

NOTE = "Lost 12 quick games to carol's new accounts."
DAY = timedelta(days=1)


def mark(player, moderator, kind=MarkKind.BOOSTER, note=NOTE, **extra):
    return marks.mark_player(player=player, kind=kind, note=note, by=moderator, now=timezone.now(), **extra)


def case_url(ladder, player):
    return reverse("ladder:report_case", args=[ladder.slug, player.username])


def mark_url(ladder, player):
    return reverse("ladder:mark_add", args=[ladder.slug, player.username])


def lift_url(ladder, player):
    return reverse("ladder:mark_lift", args=[ladder.slug, player.username])


# The services --------------------------------------------------------------------------


def test_a_moderator_marks_a_player_silently(player, moderator):
    made = mark(player, moderator)

    assert marks.mark_in_force(player=player) == made
    assert (made.kind, made.note, made.created_by, made.lifted_at) == ("booster", NOTE, moderator, None)
    assert not Notification.objects.filter(recipient=player).exists()


def test_only_moderators_mark_and_lift(player, opponent, moderator):
    with pytest.raises(ValidationError) as refused:
        mark(player, opponent)
    assert refused.value.messages == [marks.NOT_A_MODERATOR]

    made = mark(player, moderator)
    with pytest.raises(ValidationError) as lift_refused:
        marks.mark_lift(mark=made, note="Sorry", by=opponent, now=timezone.now())
    assert lift_refused.value.messages == [marks.NOT_A_MODERATOR]
    assert marks.mark_in_force(player=player) == made


def test_a_mark_needs_a_note_and_a_known_kind(player, moderator):
    with pytest.raises(ValidationError) as refused:
        mark(player, moderator, kind="cheater", note="  ")

    assert refused.value.message_dict == {"kind": [marks.UNKNOWN_KIND], "note": [marks.NOTE_REQUIRED]}
    assert not PlayerMark.objects.exists()


def test_the_other_account_is_named_only_for_another_account_of_a_player(player, opponent, moderator):
    with pytest.raises(ValidationError) as wrong_kind:
        mark(player, moderator, kind=MarkKind.SANDBAGGER, other_account=opponent)
    assert wrong_kind.value.message_dict == {"other_account": [marks.OTHER_ACCOUNT_ONLY_FOR_ALTS]}
    with pytest.raises(ValidationError) as itself:
        mark(player, moderator, kind=MarkKind.OTHER_ACCOUNT, other_account=player)
    assert itself.value.message_dict == {"other_account": [marks.OTHER_ACCOUNT_IS_SELF]}

    made = mark(player, moderator, kind=MarkKind.OTHER_ACCOUNT, other_account=opponent)
    assert made.other_account == opponent
    assert mark(opponent, moderator, kind=MarkKind.OTHER_ACCOUNT).other_account is None  # the other is optional


def test_one_mark_in_force_per_player(player, moderator):
    mark(player, moderator)

    with pytest.raises(ValidationError) as refused:
        mark(player, moderator, kind=MarkKind.SANDBAGGER)

    assert refused.value.messages == ["alice is already marked (booster). Lift that mark first."]
    assert PlayerMark.objects.count() == 1


def test_the_database_keeps_one_mark_in_force_per_player(player, moderator):
    mark(player, moderator)

    with pytest.raises(IntegrityError):
        PlayerMark.objects.create(player=player, kind="sandbagger", note="x", created_at=timezone.now())


def test_lifting_needs_a_note_and_happens_once(player, moderator):
    made = mark(player, moderator)
    with pytest.raises(ValidationError) as no_note:
        marks.mark_lift(mark=made, note=" ", by=moderator, now=timezone.now())
    assert no_note.value.message_dict == {"lift_note": [marks.LIFT_NOTE_REQUIRED]}

    marks.mark_lift(mark=made, note="Her brother's account, not hers.", by=moderator, now=timezone.now())

    made.refresh_from_db()
    assert (made.lifted_by, made.lift_note) == (moderator, "Her brother's account, not hers.")
    assert marks.mark_in_force(player=player) is None
    with pytest.raises(ValidationError) as again:
        marks.mark_lift(mark=made, note="again", by=moderator, now=timezone.now())
    assert again.value.messages == [marks.ALREADY_LIFTED]
    assert mark(player, moderator, kind=MarkKind.SANDBAGGER).kind == "sandbagger"  # a new mark after a lift
    assert not Notification.objects.filter(recipient=player).exists()


def test_marking_makes_the_players_ladders_rank_again(ladder, player, moderator):
    before = ladder.updated_at

    mark(player, moderator)

    ladder.refresh_from_db()
    assert ladder.updated_at > before


# The case page -------------------------------------------------------------------------


def test_the_case_page_offers_the_mark_form(moderator_client, ladder, player):
    response = moderator_client.get(case_url(ladder, player))

    assert response.status_code == 200
    assert 'id="mark"' in response.text and f'action="{mark_url(ladder, player)}"' in response.text


def test_a_moderator_marks_from_the_case_page(moderator_client, ladder, player, opponent, moderator):
    data = {"kind": "other_account", "other_account": "bob", "note": NOTE}

    response = moderator_client.post(mark_url(ladder, player), data, follow=True)

    assert response.redirect_chain == [(case_url(ladder, player), 302)]
    assert mark_pages.MARKED.format(player="alice", kind="another account of a player") in response.text
    made = marks.mark_in_force(player=player)
    assert (made.kind, made.other_account, made.created_by) == ("other_account", opponent, moderator)
    assert "alice is marked: another account of a player" in response.text
    assert f'action="{lift_url(ladder, player)}"' in response.text


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"kind": "booster", "note": ""}, "note", "This field is required."),
        ({"kind": "booster", "note": "   "}, "note", "This field is required."),
        (
            {"kind": "cheater", "note": NOTE},
            "kind",
            "Select a valid choice. cheater is not one of the available choices.",
        ),
        (
            {"kind": "other_account", "other_account": "nobody", "note": NOTE},
            "other_account",
            "No account is called nobody.",
        ),
        ({"kind": "booster", "other_account": "bob", "note": NOTE}, "other_account", marks.OTHER_ACCOUNT_ONLY_FOR_ALTS),
    ],
)
def test_a_bad_mark_is_a_form_error(moderator_client, ladder, player, opponent, data, field, message):
    response = moderator_client.post(mark_url(ladder, player), data)

    assert response.status_code == 400
    assert response.context["mark_form"].errors[field] == [message]
    assert not PlayerMark.objects.exists()


def test_marking_a_marked_player_is_a_form_error(moderator_client, ladder, player, moderator):
    mark(player, moderator)

    response = moderator_client.post(mark_url(ladder, player), {"kind": "sandbagger", "note": NOTE})

    assert response.status_code == 400
    assert "alice is already marked (booster). Lift that mark first." in response.text


def test_a_moderator_lifts_from_the_case_page(moderator_client, ladder, player, moderator):
    made = mark(player, moderator)

    empty = moderator_client.post(lift_url(ladder, player), {"lift_note": ""})
    assert empty.status_code == 400 and empty.context["lift_form"].errors["lift_note"] == ["This field is required."]

    response = moderator_client.post(lift_url(ladder, player), {"lift_note": "Cleared."}, follow=True)

    assert response.redirect_chain == [(case_url(ladder, player), 302)]
    made.refresh_from_db()
    assert made.lift_note == "Cleared." and made.lifted_by == moderator
    assert f'action="{mark_url(ladder, player)}"' in response.text


def test_lifting_an_unmarked_player_is_a_form_error(moderator_client, ladder, player):
    response = moderator_client.post(lift_url(ladder, player), {"lift_note": "Cleared."})

    assert response.status_code == 400
    assert mark_pages.NOT_MARKED.format(player="alice") in response.text


def test_players_may_not_mark(player_client, ladder, opponent):
    assert player_client.post(mark_url(ladder, opponent), {"kind": "booster", "note": NOTE}).status_code == 403
    assert player_client.post(lift_url(ladder, opponent), {"lift_note": "x"}).status_code == 403
    assert not PlayerMark.objects.exists()


def test_anonymous_visitors_are_sent_to_sign_in(client, ladder, player):
    response = client.post(mark_url(ladder, player), {"kind": "booster", "note": NOTE})

    assert response.status_code == 302
    assert response.url.startswith(reverse("accounts:login"))
    assert not PlayerMark.objects.exists()


def test_mark_views_take_only_post(moderator_client, ladder, player):
    assert moderator_client.get(mark_url(ladder, player)).status_code == 405
    assert moderator_client.get(lift_url(ladder, player)).status_code == 405


def test_unknown_ladder_or_player_is_404(moderator_client, ladder, player):
    data = {"kind": "booster", "note": NOTE}
    assert moderator_client.post(reverse("ladder:mark_add", args=["nope", "alice"]), data).status_code == 404
    assert moderator_client.post(reverse("ladder:mark_add", args=["chess", "nobody"]), data).status_code == 404


# The admin -----------------------------------------------------------------------------


def test_a_moderator_marks_in_the_admin(moderator_client, player, moderator):
    add = reverse("admin:ladder_playermark_add")
    assert moderator_client.get(add).status_code == 200

    response = moderator_client.post(add, {"player": player.pk, "kind": "sandbagger", "note": NOTE})

    assert response.status_code == 302
    made = marks.mark_in_force(player=player)
    assert (made.kind, made.created_by, made.note) == ("sandbagger", moderator, NOTE)


def test_the_admin_shows_the_services_refusal(moderator_client, player, moderator):
    mark(player, moderator)

    response = moderator_client.post(
        reverse("admin:ladder_playermark_add"), {"player": player.pk, "kind": "booster", "note": NOTE}
    )

    assert response.status_code == 200
    assert "alice is already marked (booster). Lift that mark first." in response.text
    assert PlayerMark.objects.count() == 1


def test_the_admin_change_page_is_read_only_history_with_a_lift_link(moderator_client, player, moderator):
    made = mark(player, moderator)

    page = moderator_client.get(reverse("admin:ladder_playermark_change", args=[made.pk]))

    assert page.status_code == 200
    assert 'name="_save"' not in page.text
    assert reverse("admin:ladder_playermark_lift", args=[made.pk]) in page.text
    assert moderator_client.get(reverse("admin:ladder_playermark_changelist")).status_code == 200
    assert moderator_client.get(reverse("admin:ladder_playermark_delete", args=[made.pk])).status_code == 403


def test_a_moderator_lifts_in_the_admin_with_a_note(moderator_client, player, moderator):
    made = mark(player, moderator)
    url = reverse("admin:ladder_playermark_lift", args=[made.pk])

    assert moderator_client.get(url).status_code == 200
    assert moderator_client.post(url, {"lift_note": ""}).status_code == 400
    response = moderator_client.post(url, {"lift_note": "Cleared."})

    assert response.status_code == 302
    made.refresh_from_db()
    assert (made.lift_note, made.lifted_by) == ("Cleared.", moderator)
    assert moderator_client.post(url, {"lift_note": "again"}).status_code == 400


def test_staff_without_the_mark_permission_cannot_open_the_admin(client, player):
    staff = UserFactory(username="helper", is_staff=True)
    client.force_login(staff)

    assert client.get(reverse("admin:ladder_playermark_add")).status_code == 403


# Leaderboards and snapshots ------------------------------------------------------------


def listed_names(ladder) -> tuple[int, list[str]]:
    board = ladder_leaderboard(ladder=ladder, now=timezone.now())
    return board.member_count, sorted(row.rating.player.username for row in (*board.ranked, *board.provisional))


def test_a_marked_account_leaves_every_leaderboard(sql_or_orm, ladder, player, opponent, moderator):
    go = LadderFactory(name="Go", slug="go")
    ladder_join(ladder=go, player=player, now=timezone.now())
    member(go, "carol")
    assert listed_names(ladder) == (2, ["alice", "bob"]) and listed_names(go) == (2, ["alice", "carol"])

    mark(player, moderator)

    assert listed_names(ladder) == (1, ["bob"])
    assert listed_names(go) == (1, ["carol"])
    assert ladder_list_with_activity(now=timezone.now()).get(pk=ladder.pk).player_count == 1


def test_a_lifted_mark_lists_the_account_again(sql_or_orm, ladder, player, opponent, moderator):
    marks.mark_lift(mark=mark(player, moderator), note="Cleared.", by=moderator, now=timezone.now())

    assert listed_names(ladder) == (2, ["alice", "bob"])


def test_marking_forgets_the_cached_leaderboard(settings, client, ladder, player, opponent, moderator):
    settings.API_LEADERBOARD_CACHE_SECONDS = 300
    assert 'href="/ladders/chess/players/alice/"' in client.get(reverse("ladder:detail", args=["chess"])).text

    mark(player, moderator)

    assert 'href="/ladders/chess/players/alice/"' not in client.get(reverse("ladder:detail", args=["chess"])).text


def test_snapshots_leave_out_an_account_from_the_moment_it_is_marked(moderator):
    ladder = LadderFactory(ranked_min_games=5, ranked_max_idle_days=30)
    midnight = local_midnight(ladder=ladder, at=timezone.now())
    users = bulk_users("snapmark-", 3)
    for rating, user in zip((1800, 1700, 1600), users, strict=True):
        PlayerRating.objects.create(
            ladder=ladder,
            player=user,
            rating=rating,
            rd=50.0,
            volatility=0.06,
            games=20,
            wins=10,
            losses=10,
            rd_as_of=midnight - DAY,
            last_played_at=midnight - DAY,
        )
    marks.mark_player(player=users[0], kind=MarkKind.BOOSTER, note=NOTE, by=moderator, now=midnight - DAY / 2)

    before = leaderboard_snapshot(ladder=ladder, midnight=midnight - DAY)
    after = leaderboard_snapshot(ladder=ladder, midnight=midnight)

    assert list(before.entries.order_by("rank").values_list("player_id", flat=True)) == [u.pk for u in users]
    assert list(after.entries.order_by("rank").values_list("player_id", flat=True)) == [u.pk for u in users[1:]]
    assert (after.ranked_count, after.member_count) == (2, 2)


def test_a_marked_players_pages_still_open_and_say_nothing_of_the_mark(client, ladder, player, opponent, moderator):
    mark(player, moderator)
    url = reverse("ladder:player", args=["chess", "alice"])

    seen_by_others = client.get(url)
    client.force_login(player)
    own = client.get(url)
    home = client.get(reverse("home"))
    ladder_page = client.get(reverse("ladder:detail", args=["chess"]))

    assert (seen_by_others.status_code, own.status_code, home.status_code, ladder_page.status_code) == (200,) * 4
    for page in (seen_by_others, own, home, ladder_page):
        assert "marked" not in page.text.lower() and NOTE not in page.text
