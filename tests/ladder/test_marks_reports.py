"""Results by or naming a marked account against unmarked players wait for a moderator
(docs/rules.md §15, "Marks"). Each runs through both ways a result is written (``report_path``)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.decisions import match_moderate_confirm
from ladder.matches.reporting import match_confirm, match_report, match_report_result
from ladder.models import MarkKind, Match, MatchSide, MatchStatus, Participant
from ladder.moderation import marks
from ratings.models import PlayerRating
from tests.factories import member

pytestmark = pytest.mark.django_db


def mark(player, moderator, kind=MarkKind.BOOSTER):
    return marks.mark_player(player=player, kind=kind, note="Feeds bob.", by=moderator, now=timezone.now())


def played(ladder, winner, loser, *, reporter):
    """``reporter`` reports a game of an hour ago that ``winner`` won; the other one confirms it."""
    now = timezone.now()
    match = match_report(
        ladder=ladder,
        reporter=reporter,
        sides=[SideInput([winner], 1), SideInput([loser], 2)],
        played_at=now - timedelta(hours=1),
        now=now,
    )
    other = loser if reporter == winner else winner
    match_confirm(match=Match.objects.get(pk=match.pk), user=other, now=now + timedelta(minutes=1))
    return Match.objects.get(pk=match.pk)


def rating(ladder, player):
    return PlayerRating.objects.get(ladder=ladder, player=player).rating


def test_a_result_reported_by_a_marked_account_waits_for_a_moderator(report_path, ladder, player, opponent, moderator):
    mark(player, moderator)
    before = rating(ladder, opponent)

    match = played(ladder, opponent, player, reporter=player)  # alice loses to bob on purpose

    assert match.status == MatchStatus.PENDING and match.held_for_moderator and match.held_for_review
    assert rating(ladder, opponent) == before
    watch = match.review_evidence["watch"]
    assert watch["codes"] == [marks.MARKED_HOLD_CODE]
    assert watch["reasons"] == [marks.HOLD_MARKED % {"player": "alice", "kind": "booster"}]
    assert watch["marked_accounts"] == [{"player": "alice", "kind": "booster"}]


def test_a_result_naming_a_marked_account_waits_for_a_moderator(report_path, ladder, player, opponent, moderator):
    mark(player, moderator, kind=MarkKind.SANDBAGGER)

    match = played(ladder, opponent, player, reporter=opponent)

    assert match.status == MatchStatus.PENDING and match.held_for_moderator
    assert match.review_evidence["watch"]["reasons"] == [marks.HOLD_MARKED % {"player": "alice", "kind": "sandbagger"}]


def test_a_moderator_confirms_it_and_it_is_rated(report_path, ladder, player, opponent, moderator):
    mark(player, moderator)
    before = rating(ladder, opponent)
    match = played(ladder, opponent, player, reporter=player)

    match_moderate_confirm(match=match, moderator=moderator, reason="A fair game.", now=timezone.now())

    assert Match.objects.get(pk=match.pk).status == MatchStatus.CONFIRMED
    assert rating(ladder, opponent) > before


def test_marked_accounts_playing_each_other_are_not_held(report_path, ladder, player, opponent, moderator):
    mark(player, moderator)
    mark(opponent, moderator, kind=MarkKind.OTHER_ACCOUNT)

    match = played(ladder, opponent, player, reporter=player)

    assert match.status == MatchStatus.CONFIRMED and not match.held_for_review


def test_a_lifted_mark_holds_nothing(report_path, ladder, player, opponent, moderator):
    marks.mark_lift(mark=mark(player, moderator), note="Cleared.", by=moderator, now=timezone.now())

    assert played(ladder, opponent, player, reporter=player).status == MatchStatus.CONFIRMED


@pytest.mark.ladder(allow_teams=True, allow_one_vs_one=False)
def test_a_marked_teammate_is_held_for_the_unmarked_opponents(report_path, ladder, player, opponent, moderator):
    carol, dave = member(ladder, "carol"), member(ladder, "dave")
    mark(carol, moderator)
    now = timezone.now()

    match = match_report(
        ladder=ladder,
        reporter=opponent,
        sides=[SideInput([player, carol], 1), SideInput([opponent, dave], 2)],
        played_at=now - timedelta(hours=1),
        now=now,
    )

    held = Match.objects.get(pk=match.pk)
    assert held.held_for_moderator
    assert held.review_evidence["watch"]["marked_accounts"] == [{"player": "carol", "kind": "booster"}]


def test_a_queue_game_reported_by_a_marked_account_is_held_and_the_api_keeps_the_mark_silent(
    report_path, ladder, player, opponent, moderator, client_for
):
    now = timezone.now()
    match = Match.objects.create(
        ladder=ladder,
        status=MatchStatus.SCHEDULED,
        played_at=now - timedelta(minutes=20),
        paired_by_queue=True,
        play_deadline=now + timedelta(minutes=ladder.play_window_minutes),
    )
    for index, who in enumerate([player, opponent]):
        side = MatchSide.objects.create(match=match, index=index)
        Participant.objects.create(match=match, side=side, player=who)
    mark(player, moderator)

    match_report_result(match=match, reporter=player, placements=[2, 1], now=now)

    seen = client_for(opponent).get(f"/api/v1/matches/{match.pk}/").json()
    assert seen["held_for_moderator"] and seen["held_because"] == []  # a moderator decides; the mark is not said
    own = client_for(player).get("/api/v1/me/fair-play/").json()
    assert [(h["match"], h["held_because"]) for h in own["held"]] == [(match.pk, [])]
    assert "marked" not in str(seen) + str(own)
    assert Match.objects.get(pk=match.pk).review_evidence["watch"]["codes"] == ["marked_account"]  # for moderators


def test_a_moderators_report_is_rated_at_once(report_path, ladder, player, opponent, moderator):
    mark(player, moderator)
    now = timezone.now()

    match = match_report(
        ladder=ladder,
        reporter=moderator,
        sides=[SideInput([opponent], 1), SideInput([player], 2)],
        played_at=now - timedelta(hours=1),
        now=now,
    )

    assert Match.objects.get(pk=match.pk).status == MatchStatus.CONFIRMED
