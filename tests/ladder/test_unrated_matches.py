"""Unrated games (docs/rules.md §22, "A tournament's life"): a match with ``rated`` off goes through the
same report, confirmation, forfeit, series and moderators' decisions as any other, and never
changes a rating, writes a rating event or counts in the statistics; a replay stays exact."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.decisions import match_correct
from ladder.matches.reporting import (
    match_confirm,
    match_confirm_overdue,
    match_dispute,
    match_report,
    match_report_result,
)
from ladder.matches.series import series_report_game
from ladder.models import Match, MatchStatus
from matchmaking import lifecycle
from matchmaking import services as q
from matchmaking.models import EntryStatus
from ratings.models import PlayerRating, RatingChange, RatingEvent
from ratings.replay import ladder_replay
from stats.models import HeadToHead

pytestmark = pytest.mark.django_db


def unrated_game(ladder, a, b, now) -> Match:
    """A game the queue paired and both players readied, then marked unrated as a tournament's would be."""
    q.queue_join(ladder=ladder, player=a, now=now)
    entry = q.queue_join(ladder=ladder, player=b, now=now)
    assert entry.status == EntryStatus.MATCHED and entry.match is not None
    lifecycle.ready(match=entry.match, user=a, now=now + timedelta(seconds=5))
    lifecycle.ready(match=entry.match, user=b, now=now + timedelta(seconds=6))
    Match.objects.filter(pk=entry.match.pk).update(rated=False)
    return Match.objects.get(pk=entry.match.pk)


def standing(ladder) -> dict[int, tuple]:
    return {
        row.player_id: (row.rating, row.rd, row.games, row.wins, row.losses)
        for row in PlayerRating.objects.filter(ladder=ladder)
    }


def side_of(match, user) -> int:
    return match.participants.get(player=user).side.index


def placements_won_by(match, user) -> list[int]:
    return [1, 2] if side_of(match, user) == 0 else [2, 1]


@pytest.mark.parametrize("report_path", ["two statements", "ORM"], indirect=True)
def test_a_confirmed_unrated_game_changes_no_rating(ladder, player, opponent, report_path):
    now = timezone.now()
    match = unrated_game(ladder, player, opponent, now)
    before = standing(ladder)

    match_report_result(match=match, reporter=player, placements=placements_won_by(match, player), now=now)
    match_confirm(match=Match.objects.get(pk=match.pk), user=opponent, now=now + timedelta(minutes=1))

    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.rated_at is None and not match.rated
    assert standing(ladder) == before
    assert not RatingEvent.objects.filter(match=match).exists()
    assert not RatingChange.objects.filter(match=match).exists()
    assert not HeadToHead.objects.filter(ladder=ladder).exists()  # the statistics count rated games only


def test_an_unrated_game_confirms_itself_when_unanswered_and_stays_unrated(ladder, player, opponent):
    now = timezone.now()
    match = unrated_game(ladder, player, opponent, now)
    before = standing(ladder)
    match_report_result(match=match, reporter=player, placements=placements_won_by(match, player), now=now)

    assert match_confirm_overdue(now=now + timedelta(hours=ladder.confirmation_hours, minutes=1)) == 1

    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.rated_at is None
    assert standing(ladder) == before


def test_a_moderators_correction_of_a_disputed_unrated_game_confirms_it_unrated(ladder, player, opponent, moderator):
    now = timezone.now()
    match = unrated_game(ladder, player, opponent, now)
    before = standing(ladder)
    match_report_result(match=match, reporter=player, placements=placements_won_by(match, player), now=now)
    match_dispute(match=Match.objects.get(pk=match.pk), user=opponent, reason="I won", now=now)

    decision = match_correct(
        match=Match.objects.get(pk=match.pk),
        moderator=moderator,
        placements=placements_won_by(match, opponent),
        reason="the replay shows it",
    )

    match.refresh_from_db()
    assert decision.job is None
    assert match.status == MatchStatus.CONFIRMED and match.rated_at is None
    assert standing(ladder) == before


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_the_games_of_an_unrated_series_are_unrated_too(ladder, player, opponent):
    now = timezone.now()
    match = unrated_game(ladder, player, opponent, now)
    before = standing(ladder)
    mine = side_of(match, player)

    series_report_game(match=match, reporter=player, winner_side=mine, now=now + timedelta(minutes=10))
    games = Match.objects.exclude(pk=match.pk).filter(ladder=ladder)
    assert games.count() == 1 and not games.get().rated
    for game in games:
        match_confirm(match=game, user=opponent, now=now + timedelta(minutes=11))

    assert games.get().status == MatchStatus.CONFIRMED and games.get().rated_at is None
    assert standing(ladder) == before


def test_a_replay_after_unrated_and_rated_games_equals_the_live_ratings(ladder, player, opponent):
    now = timezone.now() - timedelta(days=1)
    unrated = unrated_game(ladder, player, opponent, now)
    match_report_result(match=unrated, reporter=player, placements=placements_won_by(unrated, player), now=now)
    match_confirm(match=Match.objects.get(pk=unrated.pk), user=opponent, now=now)
    later = now + timedelta(hours=1)
    rated = match_report(
        ladder=ladder,
        reporter=opponent,
        sides=[SideInput([opponent], 1), SideInput([player], 2)],
        played_at=later,
        now=later,
    )
    match_confirm(match=rated, user=player, now=later)
    live = standing(ladder)
    assert live[player.pk][2] == live[opponent.pk][2] == 1  # one game each: the rated one

    ladder_replay(ladder=ladder)

    assert standing(ladder) == live
