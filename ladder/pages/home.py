"""A signed-in player's part of the home page: their ladders, what waits for them, their recent games."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import F

from accounts.models import User
from ladder.matches.reads import (
    MatchSummary,
    PlayerLine,
    claims_awaiting,
    match_summaries,
    matches_with_details,
)
from ladder.models import Match, MatchStatus
from ladder.pages.header import header_counts
from ladder.standings.leaderboard import LeaderboardRow, player_row
from ratings.models import PlayerRating

# Each ladder's rank is one ranking statement, so the home page ranks only the ladders
# played most recently; the profile lists them all.
HOME_LADDERS = 6
HOME_MATCHES = 5


@dataclass(frozen=True, slots=True)
class HomeMatch:
    """One of the player's recent matches, from their side."""

    summary: MatchSummary
    outcome: str  # "Won", "Lost", "Draw", "2nd", or "" until every side has a result
    opponents: list[User]
    line: PlayerLine  # the player's own line, with the rating change once rated


@dataclass(frozen=True, slots=True)
class PlayerHome:
    standings: list[LeaderboardRow]  # rank (None: not ranked yet) and display values per ladder
    more_ladders: bool  # the player is in more ladders than are shown
    awaiting: int  # results waiting for the player's answer
    matches: list[HomeMatch]
    claims: list[MatchSummary]  # no-show claims against the player's side, to answer before their deadline


def player_home(*, player: User, now: datetime) -> PlayerHome:
    """What the home page shows a signed-in player, in a number of queries that does not grow
    with their ladders or matches (at most ``HOME_LADDERS`` ranking statements)."""
    memberships = list(
        PlayerRating.objects.members()
        .filter(player=player)
        .select_related("ladder")
        .order_by(F("last_played_at").desc(nulls_last=True), "ladder__name")[: HOME_LADDERS + 1]
    )
    standings = [_standing(rating, player=player, now=now) for rating in memberships[:HOME_LADDERS]]
    _, waiting = header_counts(player.pk)  # results and claims: a claim costs a query only when there is one
    claims = claims_awaiting(user=player) if waiting else []
    return PlayerHome(
        standings=[row for row in standings if row is not None],
        more_ladders=len(memberships) > HOME_LADDERS,
        awaiting=max(waiting - len(claims), 0),
        matches=_recent_matches(player),
        claims=claims,
    )


def _standing(rating: PlayerRating, *, player: User, now: datetime) -> LeaderboardRow | None:
    """The player's row in the ladder's standings, as the ladder page ranks it."""
    return player_row(rating=rating, now=now)


def _recent_matches(player: User) -> list[HomeMatch]:
    matches = matches_with_details(
        Match.objects.filter(participants__player=player)
        .exclude(status=MatchStatus.SCHEDULED)
        .order_by("-played_at", "-id")
    )[:HOME_MATCHES]
    rows = []
    for summary in match_summaries(matches, viewer=player):
        mine = next(side for side in summary.sides if any(line.player.pk == player.pk for line in side.players))
        rows.append(
            HomeMatch(
                summary=summary,
                outcome=mine.outcome,
                opponents=[line.player for side in summary.sides if side is not mine for line in side.players],
                line=next(line for line in mine.players if line.player.pk == player.pk),
            )
        )
    return rows
