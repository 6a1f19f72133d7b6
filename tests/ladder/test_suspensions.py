"""Per-ladder suspensions (docs/rules.md §18): refused searches and reports, unlisted players, the notice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.models import Ladder, Suspension
from ladder.moderation import suspensions
from ladder.standings.ladders import ladder_list_with_activity
from ladder.standings.leaderboard import ladder_leaderboard
from matchmaking.models import QueueEntry
from notifications.models import Kind, Notification
from notifications.texts import describe
from tests.api.conftest import error_of, report_body
from tests.factories import member

pytestmark = pytest.mark.django_db

ENDS = datetime(2099, 11, 30, 18, 0, tzinfo=UTC)


def suspend(ladder, player, moderator=None, *, ends_at=ENDS, reason="Abusive chat in three matches"):
    return suspensions.suspend(
        ladder=ladder, player=player, reason=reason, ends_at=ends_at, by=moderator, now=timezone.now()
    )


# The service ---------------------------------------------------------------------------


def test_suspend_requires_a_reason_and_a_future_end(ladder, player, moderator):
    now = timezone.now()
    with pytest.raises(ValidationError) as empty:
        suspensions.suspend(ladder=ladder, player=player, reason="  ", ends_at=None, by=moderator, now=now)
    assert empty.value.message_dict == {"reason": [suspensions.REASON_REQUIRED]}
    with pytest.raises(ValidationError) as past:
        suspensions.suspend(ladder=ladder, player=player, reason="x", ends_at=now, by=moderator, now=now)
    assert past.value.message_dict == {"ends_at": [suspensions.ENDS_IN_PAST]}
    assert not Suspension.objects.exists()


def test_refusal_gives_the_ladder_the_end_in_words_and_the_reason(ladder, player, moderator):
    suspend(ladder, player, moderator)

    with pytest.raises(ValidationError) as refused:
        suspensions.refuse_if_suspended(ladder=ladder, player=player, now=timezone.now())

    assert refused.value.code == "suspended"
    assert refused.value.messages == [
        "You are suspended from Chess until 30 Nov 2099, 18:00 UTC. Reason: Abusive chat in three matches."
    ]


def test_an_indefinite_suspension_lasts_until_lifted(ladder, player, moderator):
    suspension = suspend(ladder, player, moderator, ends_at=None, reason="Smurf account.")
    message = suspensions.suspended_message(suspension)
    assert message == "You are suspended from Chess until a moderator lifts it. Reason: Smurf account."

    suspensions.lift(suspension=suspension, by=moderator, now=timezone.now())

    assert suspensions.active_suspension(ladder=ladder, player=player, now=timezone.now()) is None
    with pytest.raises(ValidationError):
        suspensions.lift(suspension=suspension, by=moderator, now=timezone.now())


def test_an_ended_suspension_no_longer_applies(ladder, player, moderator):
    now = timezone.now()
    suspensions.suspend(ladder=ladder, player=player, reason="x", ends_at=now + timedelta(hours=1), by=None, now=now)

    assert suspensions.active_suspension(ladder=ladder, player=player, now=now + timedelta(minutes=59))
    assert suspensions.active_suspension(ladder=ladder, player=player, now=now + timedelta(hours=1)) is None


def test_a_suspension_is_for_one_ladder_only(ladder, player, moderator):
    other = Ladder.objects.create(name="Go", slug="go", game="Go")
    suspend(ladder, player, moderator)
    assert suspensions.active_suspension(ladder=other, player=player, now=timezone.now()) is None


def test_the_player_is_told_why_and_until_when(ladder, player, moderator):
    suspend(ladder, player, moderator)

    told = Notification.objects.get(recipient=player, kind=Kind.SUSPENDED)

    assert told.data["ladder"] == "Chess"
    assert told.data["reason"] == "Abusive chat in three matches"
    assert told.data["ends_at"] == ENDS.isoformat()


# Searching and reporting ----------------------------------------------------------------


def test_queue_join_is_refused_on_the_web(client, ladder, player, moderator):
    suspend(ladder, player, moderator)
    client.force_login(player)

    response = client.post(reverse("matchmaking:join", args=["chess"]), follow=True)

    assert "You are suspended from Chess until 30 Nov 2099" in response.text
    assert not QueueEntry.objects.filter(player=player).exists()


def test_queue_join_is_refused_through_the_api_with_403(client_for, ladder, player, moderator):
    suspend(ladder, player, moderator)

    response = client_for(player).post("/api/v1/ladders/chess/queue/", {}, format="json")

    assert response.status_code == 403
    error = error_of(response)
    assert error["code"] == "suspended"
    assert "Reason: Abusive chat in three matches." in error["message"]


def test_a_suspended_player_cannot_report(report_path, ladder, player, opponent, moderator):
    suspend(ladder, player, moderator)

    with pytest.raises(ValidationError) as refused:
        match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])

    assert refused.value.code == "suspended"
    assert "Reason: Abusive chat" in refused.value.messages[0]


def test_a_report_naming_a_suspended_player_is_refused_without_their_reason(
    report_path, ladder, player, opponent, moderator
):
    suspend(ladder, opponent, moderator)

    with pytest.raises(ValidationError) as refused:
        match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])

    assert refused.value.code == "suspended"
    assert refused.value.messages == [
        "bob is suspended from Chess and cannot be named in a result until 30 Nov 2099, 18:00 UTC."
    ]


def test_api_report_by_a_suspended_player_is_403(client_for, ladder, player, opponent, moderator):
    suspend(ladder, player, moderator)

    response = client_for(player).post("/api/v1/matches/", report_body(ladder), format="json")

    assert response.status_code == 403
    assert error_of(response)["code"] == "suspended"


def test_a_lifted_suspension_lets_the_player_report_again(report_path, ladder, player, opponent, moderator):
    suspension = suspend(ladder, player, moderator)
    suspensions.lift(suspension=suspension, by=moderator, now=timezone.now())

    match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])


# Listing --------------------------------------------------------------------------------


def listed_names(ladder: Ladder) -> tuple[int, list[str]]:
    board = ladder_leaderboard(ladder=ladder, now=timezone.now())
    return board.member_count, sorted(row.rating.player.username for row in (*board.ranked, *board.provisional))


def test_banned_and_suspended_players_leave_the_leaderboard(sql_or_orm, ladder, player, opponent, moderator):
    carol = member(ladder, "carol")
    member(ladder, "dave")
    assert listed_names(ladder) == (4, ["alice", "bob", "carol", "dave"])

    suspend(ladder, player, moderator)
    carol.is_active = False
    carol.save(update_fields=["is_active"])

    assert listed_names(ladder) == (2, ["bob", "dave"])


def test_a_lifted_suspension_lists_the_player_again(sql_or_orm, ladder, player, opponent, moderator):
    suspension = suspend(ladder, player, moderator)
    suspensions.lift(suspension=suspension, by=moderator, now=timezone.now())

    assert listed_names(ladder) == (2, ["alice", "bob"])


def test_member_counts_leave_out_banned_and_suspended_players(api, ladder, player, opponent, moderator):
    carol = member(ladder, "carol")
    carol.is_active = False
    carol.save(update_fields=["is_active"])
    suspend(ladder, player, moderator)

    listed = ladder_list_with_activity(now=timezone.now()).get(pk=ladder.pk)

    assert listed.player_count == 1
    assert api.get("/api/v1/ladders/chess/").json()["member_count"] == 1


def test_suspending_forgets_the_cached_leaderboard(settings, client, ladder, player, opponent, moderator):
    settings.API_LEADERBOARD_CACHE_SECONDS = 300
    assert "alice" in client.get(reverse("ladder:detail", args=["chess"])).text

    suspend(ladder, player, moderator)

    page = client.get(reverse("ladder:detail", args=["chess"])).text
    assert 'href="/ladders/chess/players/alice/"' not in page


def test_a_suspended_players_page_still_works_and_says_why(client, ladder, player, opponent, moderator):
    suspend(ladder, player, moderator)
    url = reverse("ladder:player", args=["chess", "alice"])

    seen_by_others = client.get(url)
    client.force_login(player)
    seen_by_self = client.get(url)

    assert seen_by_others.status_code == 200
    assert "alice is suspended from Chess until 30 Nov 2099, 18:00 UTC." in seen_by_others.text
    assert "Abusive chat" not in seen_by_others.text
    assert "Reason: Abusive chat in three matches." in seen_by_self.text


def test_the_ladder_page_shows_the_notice_instead_of_find_a_match(client, ladder, player, moderator):
    client.force_login(player)
    assert "Find a match" in client.get(reverse("ladder:detail", args=["chess"])).text

    suspend(ladder, player, moderator)
    page = client.get(reverse("ladder:detail", args=["chess"])).text

    assert "You are suspended from Chess until 30 Nov 2099, 18:00 UTC." in page
    assert "Find a match" not in page


# The admin ------------------------------------------------------------------------------


def test_a_moderator_suspends_through_the_admin_and_the_player_is_told(moderator_client, ladder, player):
    response = moderator_client.post(
        reverse("admin:ladder_suspension_add"),
        {
            "ladder": ladder.pk,
            "player": player.pk,
            "reason": "Cheating",
            "ends_at_0": "2099-11-30",
            "ends_at_1": "18:00",
        },
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    suspension = Suspension.objects.get()
    assert suspension.created_by.username == "mod" and suspension.ends_at == ENDS
    assert Notification.objects.filter(recipient=player, kind=Kind.SUSPENDED).exists()


def test_a_moderator_lists_and_lifts_suspensions_in_the_admin(moderator_client, ladder, player, moderator):
    suspension = suspend(ladder, player, moderator)
    listing = moderator_client.get(reverse("admin:ladder_suspension_changelist"))
    assert listing.status_code == 200 and "Abusive chat" in listing.text

    moderator_client.post(
        reverse("admin:ladder_suspension_changelist"),
        {"action": "lift_selected", "_selected_action": [suspension.pk]},
    )

    suspension.refresh_from_db()
    assert suspension.lifted_at is not None and suspension.lifted_by.username == "mod"  # who lifted it is kept
    page = moderator_client.get(reverse("admin:ladder_suspension_change", args=[suspension.pk])).text
    assert "Lifted by" in page and ">mod<" in page


def test_a_lifted_player_is_told_they_may_play_again(ladder, player, moderator):
    suspension = suspend(ladder, player, moderator, ends_at=None, reason="Smurf account.")

    suspensions.lift(suspension=suspension, by=moderator, now=timezone.now())

    told = Notification.objects.get(recipient=player, kind=Kind.DECISION)
    text = describe(told)
    assert text.title == "Your suspension was lifted"
    assert "lifted your suspension from Chess: you can search and report results there again" in text.body
    assert text.url == reverse("ladder:detail", args=[ladder.slug])


def test_lifting_a_suspension_that_had_ended_tells_nobody(ladder, player, moderator):
    now = timezone.now()
    ended = suspensions.suspend(
        ladder=ladder, player=player, reason="x", ends_at=now + timedelta(hours=1), by=None, now=now
    )

    suspensions.lift(suspension=ended, by=moderator, now=now + timedelta(hours=2))

    ended.refresh_from_db()
    assert ended.lifted_by == moderator  # recorded all the same
    assert not Notification.objects.filter(recipient=player, kind=Kind.DECISION).exists()


def test_the_admin_refuses_an_end_in_the_past(moderator_client, ladder, player):
    response = moderator_client.post(
        reverse("admin:ladder_suspension_add"),
        {
            "ladder": ladder.pk,
            "player": player.pk,
            "reason": "Cheating",
            "ends_at_0": "2001-01-01",
            "ends_at_1": "00:00",
        },
    )

    assert response.status_code == 200
    assert suspensions.ENDS_IN_PAST in response.text
    assert not Suspension.objects.exists()


def test_a_moderator_finds_the_player_by_autocomplete(moderator_client, ladder, player):
    response = moderator_client.get(
        reverse("admin:autocomplete"),
        {"app_label": "ladder", "model_name": "suspension", "field_name": "player", "term": "ali"},
    )

    assert response.status_code == 200
    assert [row["text"] for row in response.json()["results"]] == ["alice"]


def test_a_running_search_ends_when_its_player_is_suspended(ladder, player, moderator):
    from matchmaking import services as queue

    now = timezone.now()
    queue.queue_join(ladder=ladder, player=player, now=now)
    suspensions.suspend(ladder=ladder, player=player, reason="Abuse in chat.", ends_at=None, by=moderator, now=now)

    entry = queue.queue_poll(ladder=ladder, player=player, now=now + timedelta(seconds=11))

    assert entry.status == "left"
    assert not QueueEntry.objects.filter(status="waiting").exists()
