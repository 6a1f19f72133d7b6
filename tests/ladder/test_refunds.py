"""Refunds to the victims of a booster or cheater (docs/rules.md §15, "Refunds")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.moderation.refunds import NOTHING, OWN, refund_points, refunds_apply, refunds_offered
from notifications.models import Kind, Notification
from ratings.models import AdjustmentKind, PlayerRating, RatingAdjustment
from ratings.services import ladder_replay
from tests.factories import member
from tests.ratings.test_replay import assert_same, snapshot


def settled(ladder, name: str, rating: float = 1600.0):
    """A regular: an established rating with a low RD, so not provisional."""
    player = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=player).update(rating=rating, rd=60.0, rd_as_of=timezone.now())
    return player


def lose(ladder, loser, winner, at):
    match = svc.match_report(
        ladder=ladder, reporter=loser, sides=[SideInput([winner], 1), SideInput([loser], 2)], played_at=at, now=at
    )
    svc.match_confirm(match=match, user=winner, now=at)
    return match


@pytest.fixture
def booster_and_victims(ladder):
    """cheat beats alice and bob twice each, and carol (provisional: RD 350) once, in the last day."""
    cheat = member(ladder, "cheat")
    alice, bob = settled(ladder, "alice", 1650.0), settled(ladder, "bob", 1580.0)
    carol = member(ladder, "carol")
    now = timezone.now()
    for n, victim in enumerate([alice, bob, alice, bob, carol]):
        lose(ladder, victim, cheat, now - timedelta(hours=20 - n))
    return cheat, alice, bob, carol


def rating(ladder, player) -> float:
    return PlayerRating.objects.get(ladder=ladder, player=player).rating


def test_the_non_provisional_opponents_get_back_what_they_lost(ladder, booster_and_victims, moderator):
    cheat, alice, bob, carol = booster_and_victims
    before = {p.username: rating(ladder, p) for p in (alice, bob)}

    offered = refunds_offered(ladder=ladder, offender=cheat, now=timezone.now())

    assert [(r.username, r.games) for r in sorted(offered, key=lambda r: r.username)] == [("alice", 2), ("bob", 2)]
    for refund in offered:
        assert refund.lost > 0 and refund.points == round(min(refund.lost, ladder.refund_cap), 1)
    given = refunds_apply(ladder=ladder, offender=cheat, moderator=moderator, now=timezone.now())

    assert given == offered
    for refund in given:
        assert rating(ladder, User(pk=refund.victim_id)) == pytest.approx(before[refund.username] + refund.points)
        adjustment = RatingAdjustment.objects.get(player_id=refund.victim_id)
        assert (adjustment.kind, adjustment.refund_for, adjustment.rating_delta) == (
            AdjustmentKind.REFUND,
            cheat,
            refund.points,
        )
    told = Notification.objects.filter(kind=Kind.DECISION, recipient__in=[alice, bob])
    assert told.count() == 2
    assert all("cheat" in n.data["reason"] and n.data["delta"] > 0 for n in told)
    assert not RatingAdjustment.objects.filter(player__in=[cheat, carol]).exists()


def test_a_full_replay_with_the_refunds_as_events_gives_the_live_ratings_to_the_bit(
    ladder, booster_and_victims, moderator
):
    cheat, alice, bob, _ = booster_and_victims
    refunds_apply(ladder=ladder, offender=cheat, moderator=moderator, now=timezone.now())
    lose(ladder, alice, bob, timezone.now())  # a game after the refunds
    live = snapshot(ladder)

    ladder_replay(ladder=ladder)

    assert_same(live, snapshot(ladder))


def test_a_second_refund_finds_nothing_new_and_the_cap_and_window_hold(ladder, booster_and_victims, moderator):
    cheat = booster_and_victims[0]
    refunds_apply(ladder=ladder, offender=cheat, moderator=moderator, now=timezone.now())
    with pytest.raises(ValidationError) as refused:
        refunds_apply(ladder=ladder, offender=cheat, moderator=moderator, now=timezone.now() + timedelta(seconds=1))
    assert refused.value.messages == [NOTHING.format(player="cheat", ladder="Chess")]
    with pytest.raises(ValidationError) as own:
        refunds_apply(ladder=ladder, offender=moderator, moderator=moderator, now=timezone.now())
    assert own.value.messages == [OWN]

    dave = settled(ladder, "dave")
    lose(ladder, dave, cheat, timezone.now() - timedelta(days=ladder.refund_days, hours=1))  # before the window
    erin = settled(ladder, "erin")
    lose(ladder, erin, cheat, timezone.now())
    (lost,) = [r.lost for r in refunds_offered(ladder=ladder, offender=cheat, now=timezone.now())]
    ladder.refund_cap = round(lost / 2, 1)
    ladder.save(update_fields=["refund_cap"])
    offered = refunds_offered(ladder=ladder, offender=cheat, now=timezone.now() + timedelta(seconds=2))
    assert [(r.username, r.points) for r in offered] == [("erin", ladder.refund_cap)]


def test_the_rule_gives_less_to_a_victim_who_climbed_back_and_never_lifts_past_their_peak():
    # docs/rules.md §15's example: lost 60 from a top of 1,700, back at 1,670 since, peak 1,720.
    assert refund_points(lost=60, top=1700, current=1670, peak=1720, cap=150) == 45.0  # 60 − (60 + 1670 − 1700)/2
    assert refund_points(lost=60, top=1700, current=1640, peak=1720, cap=150) == 60.0  # no climb: all of it
    assert refund_points(lost=100, top=1700, current=1650, peak=1700, cap=150) == 70.0  # at most peak − now + 20
    assert refund_points(lost=300, top=1700, current=1400, peak=1800, cap=150) == 150.0
    assert refund_points(lost=60, top=1700, current=1640, peak=None, cap=150) == 60.0
    assert refund_points(lost=60, top=1600, current=1800, peak=1800, cap=150) == 0.0  # climbed far past


def test_moderators_see_the_refunds_on_the_case_page_and_give_them(client, ladder, booster_and_victims, moderator):
    cheat, alice, _, _ = booster_and_victims
    url = reverse("ladder:report_case", args=[ladder.slug, "cheat"])
    refund_url = reverse("ladder:refund", args=[ladder.slug, "cheat"])
    client.force_login(alice)
    assert client.post(refund_url).status_code == 403
    staff = Client()
    staff.force_login(moderator)

    page = staff.get(url).content.decode()
    assert "Refund 2 players" in page and "alice" in page

    given = staff.post(refund_url, follow=True)
    assert "Refunded 2 players: " in given.content.decode()
    assert RatingAdjustment.objects.filter(kind=AdjustmentKind.REFUND, refund_for=cheat).count() == 2
    again = staff.post(refund_url)
    assert again.status_code == 400 and NOTHING.format(player="cheat", ladder="Chess") in again.content.decode()
