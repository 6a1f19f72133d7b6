"""The moderation desk (/moderation/) and the match page's Moderator box (docs/rules.md §18).

Matches are written with the ORM in the state each test needs (disputed, claimed, expired),
as the match lifecycle would leave them.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.models import CancelReason, Match, MatchSide, MatchStatus, Participant, SideAnswer
from ladder.moderation.desk import DESK_LIST_SIZE
from ladder.pages.moderation import CONFIRMED, CORRECTED, NOT_A_MODERATOR, VOIDED
from notifications.models import Kind, Notification
from notifications.texts import describe

pytestmark = pytest.mark.django_db
DESK = reverse("moderation")


def game(ladder, player, opponent, *, status=MatchStatus.PENDING, placements=(1, 2), minutes_ago=60, **fields):
    """A match between ``player`` and ``opponent``, reported by ``player`` ``minutes_ago`` minutes ago."""
    at = timezone.now() - timedelta(minutes=minutes_ago)
    match = Match.objects.create(
        ladder=ladder, status=status, played_at=at, reported_by=player, reported_at=at, **fields
    )
    for index, (who, place) in enumerate(zip((player, opponent), placements, strict=True)):
        side = MatchSide.objects.create(match=match, index=index, placement=place)
        Participant.objects.create(match=match, side=side, player=who)
    return match


def dispute(match, player, reason):
    side = match.sides.get(participants__player=player)
    side.answer, side.answered_by, side.answered_at, side.dispute_reason = (
        SideAnswer.DISPUTED,
        player,
        timezone.now(),
        reason,
    )
    side.save()
    return match


def test_anonymous_visitor_is_sent_to_log_in(client):
    response = client.get(DESK)

    assert response.status_code == 302 and response.url.startswith(reverse("accounts:login"))


def test_player_gets_a_403_page_that_says_why(player_client):
    response = player_client.get(DESK)

    assert response.status_code == 403
    assert NOT_A_MODERATOR in response.text and "<h1>Not allowed</h1>" in response.text


def test_desk_lists_disputes_with_their_reason_newest_first(moderator_client, ladder, player, opponent):
    older = dispute(game(ladder, player, opponent, status=MatchStatus.DISPUTED, minutes_ago=300), opponent, "old")
    newer = dispute(
        game(ladder, player, opponent, status=MatchStatus.DISPUTED, minutes_ago=5), opponent, "I won <that> game"
    )
    game(ladder, player, opponent)  # pending: nothing for a moderator yet

    response = moderator_client.get(DESK)

    assert response.status_code == 200
    disputed = response.context["desk"].lists[0]
    assert disputed.key == "disputed" and disputed.count == 2
    assert [row.match for row in disputed.rows] == [newer, older]
    assert "I won &lt;that&gt; game" in response.text  # escaped
    assert f'href="{newer.get_absolute_url()}#moderator"' in response.text
    assert reverse("admin:ladder_match_change", args=[newer.pk]) in response.text


def test_desk_lists_no_show_claims_and_contested_claims(moderator_client, ladder, player, opponent):
    now = timezone.now()
    claimed = game(ladder, player, opponent, status=MatchStatus.CLAIMED, placements=(None, None))
    MatchSide.objects.filter(match=claimed, index=0).update(no_show_claimed_at=now)
    contested = dispute(game(ladder, player, opponent, status=MatchStatus.DISPUTED), opponent, "I was there")
    MatchSide.objects.filter(match=contested, index=0).update(no_show_claimed_at=now)

    desk = moderator_client.get(DESK).context["desk"]

    lists = {desk_list.key: desk_list for desk_list in desk.lists}
    claims = lists["claims"]
    assert claims.count == 2 and {row.match.pk for row in claims.rows} == {claimed.pk, contested.pk}
    assert all(row.claimants[0].players == ["alice"] for row in claims.rows)
    assert lists["disputed"].count == 0  # the contested claim is listed once, with the claims
    assert desk.waiting == 2


def test_desk_counts_each_match_once_and_lists_newest_first_with_its_age(
    moderator_client, ladder, player, opponent, time_machine
):
    now = timezone.now()
    time_machine.move_to(now, tick=False)
    old_dispute = dispute(game(ladder, player, opponent, status=MatchStatus.DISPUTED, minutes_ago=600), opponent, "x")
    Match.objects.filter(pk=old_dispute.pk).update(reported_at=now - timedelta(hours=10))
    MatchSide.objects.filter(match=old_dispute).update(answered_at=now - timedelta(hours=9))
    # A claim contested with "I did play": disputed, never reported, claimed 2 hours ago.
    contested = game(ladder, player, opponent, status=MatchStatus.DISPUTED)
    Match.objects.filter(pk=contested.pk).update(reported_by=None, reported_at=None)
    MatchSide.objects.filter(match=contested, index=0).update(no_show_claimed_at=now - timedelta(hours=2))
    MatchSide.objects.filter(match=contested, index=1).update(
        answer=SideAnswer.DISPUTED, answered_at=now - timedelta(hours=1), dispute_reason="I was there"
    )
    older_claim = game(ladder, player, opponent, status=MatchStatus.CLAIMED, placements=(None, None))
    MatchSide.objects.filter(match=older_claim, index=0).update(no_show_claimed_at=now - timedelta(hours=5))
    Match.objects.filter(pk=older_claim.pk).update(claim_deadline=now + timedelta(hours=19))

    response = moderator_client.get(DESK)

    desk = response.context["desk"]
    lists = {desk_list.key: desk_list for desk_list in desk.lists}
    assert desk.waiting == 3 and "3 matches to look at, newest first." in response.text
    assert [row.match.pk for row in lists["disputed"].rows] == [old_dispute.pk]
    assert lists["disputed"].rows[0].since == now - timedelta(hours=9)  # when it was disputed
    assert [(row.match.pk, row.since) for row in lists["claims"].rows] == [
        (contested.pk, now - timedelta(hours=2)),
        (older_claim.pk, now - timedelta(hours=5)),
    ]
    assert f"match {contested.pk} · 2\xa0hours ago" in re.sub(r"<[^>]+>", "", response.text)  # in a <time>


def test_desk_lists_matches_that_expired_in_the_last_30_days(moderator_client, ladder, player, opponent):
    now = timezone.now()
    recent = game(
        ladder,
        player,
        opponent,
        status=MatchStatus.CANCELLED,
        placements=(None, None),
        cancel_reason=CancelReason.EXPIRED,
        cancelled_at=now - timedelta(days=2),
    )
    game(ladder, player, opponent, status=MatchStatus.CANCELLED, placements=(None, None),
         cancel_reason=CancelReason.EXPIRED, cancelled_at=now - timedelta(days=31))  # fmt: skip
    game(ladder, player, opponent, status=MatchStatus.CANCELLED, placements=(None, None),
         cancel_reason=CancelReason.AGREED, cancelled_at=now)  # fmt: skip

    desk = moderator_client.get(DESK).context["desk"]

    expired = {desk_list.key: desk_list for desk_list in desk.lists}["expired"]
    assert [row.match for row in expired.rows] == [recent]


def test_each_list_stops_at_50_and_links_the_rest_in_the_admin(moderator_client, ladder, player, opponent):
    for minutes in range(DESK_LIST_SIZE + 2):
        dispute(game(ladder, player, opponent, status=MatchStatus.DISPUTED, minutes_ago=minutes + 1), opponent, "x")

    response = moderator_client.get(DESK)

    disputed = response.context["desk"].lists[0]
    assert disputed.count == DESK_LIST_SIZE + 2 and len(disputed.rows) == DESK_LIST_SIZE
    changelist = reverse("admin:ladder_match_changelist")
    assert f'<a href="{changelist}?status__exact=disputed">2 more in the admin</a>' in response.text
    admin_list = moderator_client.get(f"{changelist}?status__exact=disputed")
    assert admin_list.status_code == 200 and admin_list.context["cl"].result_count == DESK_LIST_SIZE + 2


def test_every_more_link_is_a_filter_the_admin_accepts(moderator_client):
    desk = moderator_client.get(DESK).context["desk"]

    for desk_list in desk.lists:
        response = moderator_client.get(f"{reverse('admin:ladder_match_changelist')}?{desk_list.admin_query}")
        assert response.status_code == 200, desk_list.admin_query  # an unknown filter redirects to ?e=1


def test_desk_query_count_does_not_grow_with_matches(
    moderator_client, ladder, player, opponent, django_assert_max_num_queries
):
    for minutes in range(5):
        dispute(game(ladder, player, opponent, status=MatchStatus.DISPUTED, minutes_ago=minutes + 1), opponent, "x")
    moderator_client.get(DESK)  # sessions and permissions cached as on every later page

    with django_assert_max_num_queries(20):
        moderator_client.get(DESK)


def test_header_moderation_link_goes_to_the_desk_for_a_moderator(moderator_client):
    page = moderator_client.get(reverse("home")).text

    assert f'<a href="{DESK}">Moderation</a>' in page


def test_header_has_no_moderation_link_for_a_player(player_client):
    assert f'href="{DESK}"' not in player_client.get(reverse("home")).text


# The match page's Moderator box.


def test_moderator_sees_the_box_with_the_match_state_first(moderator_client, ladder, player, opponent):
    match = dispute(game(ladder, player, opponent, status=MatchStatus.DISPUTED), opponent, "score was 2-1 for me")

    page = moderator_client.get(match.get_absolute_url()).text

    box = page[page.index('id="moderator"') :]
    assert box.index("Disputed") < box.index("Correct the result")
    assert "score was 2-1 for me" in box
    for name in ("match_void", "match_correct", "match_moderate_confirm"):
        assert reverse(f"ladder:{name}", args=[match.pk]) in box


def test_player_sees_no_moderator_box(player_client, ladder, player, opponent):
    match = game(ladder, player, opponent)

    assert 'id="moderator"' not in player_client.get(match.get_absolute_url()).text


@pytest.mark.parametrize("name", ["match_void", "match_correct", "match_moderate_confirm"])
def test_a_player_may_not_decide(player_client, ladder, player, opponent, name):
    match = game(ladder, player, opponent, status=MatchStatus.DISPUTED)

    response = player_client.post(reverse(f"ladder:{name}", args=[match.pk]), {"void-reason": "mine"})

    assert response.status_code == 403
    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED


@pytest.mark.parametrize("name", ["match_void", "match_correct", "match_moderate_confirm"])
def test_decisions_take_posts_only_and_unknown_matches_are_404(moderator_client, name):
    assert moderator_client.get(reverse(f"ladder:{name}", args=[1])).status_code == 405
    assert moderator_client.post(reverse(f"ladder:{name}", args=[999999])).status_code == 404


def test_void_needs_a_reason_shown_as_a_form_error(moderator_client, ladder, player, opponent):
    match = game(ladder, player, opponent, status=MatchStatus.DISPUTED)

    response = moderator_client.post(reverse("ladder:match_void", args=[match.pk]), {"void-reason": "  "})

    assert response.status_code == 400
    assert "This field is required." in response.text and '<details class="moderator-form" open>' in response.text
    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED


def test_void_with_a_reason_voids_through_the_service(moderator_client, moderator, ladder, player, opponent):
    match = game(ladder, player, opponent, status=MatchStatus.DISPUTED)

    response = moderator_client.post(
        reverse("ladder:match_void", args=[match.pk]), {"void-reason": "wrong ladder"}, follow=True
    )

    assert VOIDED in response.text
    match.refresh_from_db()
    assert match.status == MatchStatus.VOID and match.voided_by == moderator
    assert "wrong ladder" in match.moderator_note


def test_voiding_a_void_match_is_a_form_error_not_a_500(moderator_client, ladder, player, opponent):
    match = game(ladder, player, opponent, status=MatchStatus.VOID)

    response = moderator_client.post(reverse("ladder:match_void", args=[match.pk]), {"void-reason": "again"})

    assert response.status_code == 400 and "errorlist nonfield" in response.text


def test_correct_sets_places_through_the_service(moderator_client, ladder, player, opponent):
    match = dispute(game(ladder, player, opponent, status=MatchStatus.DISPUTED), opponent, "I won")
    url = reverse("ladder:match_correct", args=[match.pk])

    response = moderator_client.post(
        url, {"correct-side_0": "2", "correct-side_1": "1", "correct-reason": "replay shows bob won"}, follow=True
    )

    assert CORRECTED in response.text
    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.confirmation == "moderator"
    assert [side.placement for side in match.sides.order_by("index")] == [2, 1]


def test_correct_without_a_reason_or_with_a_bad_place_is_a_form_error(moderator_client, ladder, player, opponent):
    match = game(ladder, player, opponent, status=MatchStatus.DISPUTED)
    url = reverse("ladder:match_correct", args=[match.pk])

    no_reason = moderator_client.post(url, {"correct-side_0": "2", "correct-side_1": "1", "correct-reason": ""})
    bad_place = moderator_client.post(url, {"correct-side_0": "0", "correct-side_1": "x", "correct-reason": "r"})

    assert no_reason.status_code == 400 and "This field is required." in no_reason.text
    assert bad_place.status_code == 400 and "errorlist" in bad_place.text
    assert [side.placement for side in match.sides.order_by("index")] == [1, 2]


def test_confirm_settles_a_dispute_as_reported_with_the_reason_told(moderator_client, ladder, player, opponent):
    match = game(ladder, player, opponent, status=MatchStatus.DISPUTED)
    url = reverse("ladder:match_moderate_confirm", args=[match.pk])

    response = moderator_client.post(url, {"confirm-reason": "the replay shows alice won"}, follow=True)

    assert CONFIRMED in response.text
    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.confirmation == "moderator"
    assert "Confirmed as reported by a moderator. Reason: the replay shows alice won." in match.moderator_note
    told = Notification.objects.get(recipient=opponent, kind=Kind.DECISION)
    assert describe(told).body.endswith("Reason: the replay shows alice won.")


def test_confirm_needs_a_reason_shown_as_a_form_error(moderator_client, ladder, player, opponent):
    match = game(ladder, player, opponent, status=MatchStatus.DISPUTED)

    response = moderator_client.post(reverse("ladder:match_moderate_confirm", args=[match.pk]), {"confirm-reason": " "})

    assert response.status_code == 400
    assert "This field is required." in response.text and '<details class="moderator-form" open>' in response.text
    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED


def test_confirming_a_confirmed_match_is_an_error_on_the_page(moderator_client, ladder, player, opponent):
    match = game(ladder, player, opponent, status=MatchStatus.VOID)

    response = moderator_client.post(reverse("ladder:match_moderate_confirm", args=[match.pk]), {"confirm-reason": "r"})

    assert response.status_code == 400 and "errorlist nonfield" in response.text
