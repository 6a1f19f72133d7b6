"""Reads of the statistics, shared by the pages, the template tags and the API.

Every read is a few rows of the aggregates (``stats.models``) by an index, plus, for a
head-to-head page, the last matches between the two players: none scans the ladder's
matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef

from accounts.models import User
from ladder.models import Ladder, MatchField, MatchStatus, Participant
from stats.models import FieldValueStat, HeadToHead, PlayerFieldStat
from stats.sql import COUNTED_KINDS

RECENT_MATCHES = 10


def counted_fields(ladder: Ladder) -> list[MatchField]:
    """The ladder's fields the statistics count (choices, text, yes/no), in their order."""
    return list(MatchField.objects.filter(ladder=ladder, kind__in=COUNTED_KINDS).order_by("position", "id"))


def field_stats(field: MatchField) -> list[FieldValueStat]:
    """The field's values with their records, the most played first."""
    return list(FieldValueStat.objects.filter(field=field, games__gt=0).order_by("-games", "value"))


def player_records(ladder: Ladder, player_id: int) -> list[tuple[MatchField, list[PlayerFieldStat]]]:
    """A player's record per value of each counted field, fields in order, the most played value first."""
    rows = (
        PlayerFieldStat.objects.filter(ladder=ladder, player_id=player_id, games__gt=0)
        .select_related("field")
        .order_by("field__position", "field_id", "-games", "value")
    )
    grouped: dict[int, tuple[MatchField, list[PlayerFieldStat]]] = {}
    for row in rows:
        grouped.setdefault(row.field_id, (row.field, []))[1].append(row)
    return list(grouped.values())


@dataclass(frozen=True, slots=True)
class Meeting:
    """One match between the two players, from the first player's side."""

    match_id: int
    played_at: datetime
    result: str  # "win", "loss" or "draw"


@dataclass(frozen=True, slots=True)
class Versus:
    """Player ``a``'s record against ``b`` in a ladder (``expected``: a's summed pre-match win probability)."""

    ladder: Ladder
    a: User
    b: User
    games: int
    wins: int
    losses: int
    draws: int
    expected: float

    @property
    def expected_wins(self) -> float:
        """Wins the ratings expected, draws counting half (as ``score``)."""
        return self.expected

    @property
    def score(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def expected_rate(self) -> float | None:
        return None if not self.games else self.expected / self.games

    @property
    def win_rate(self) -> float | None:
        return None if not self.games else self.score / self.games


def versus(ladder: Ladder, a: User, b: User) -> Versus:
    """``a``'s head-to-head record against ``b`` (all zero when they never met)."""
    low, high = sorted((a.pk, b.pk))
    row = HeadToHead.objects.filter(ladder=ladder, player_low_id=low, player_high_id=high).first()
    if row is None:
        return Versus(ladder, a, b, 0, 0, 0, 0, 0.0)
    if a.pk == low:
        return Versus(ladder, a, b, row.games, row.low_wins, row.high_wins, row.draws, row.expected_low_sum)
    return Versus(ladder, a, b, row.games, row.high_wins, row.low_wins, row.draws, row.games - row.expected_low_sum)


def recent_meetings(ladder: Ladder, a: User, b: User, limit: int = RECENT_MATCHES) -> list[Meeting]:
    """The last rated matches where ``a`` and ``b`` played on different sides, newest first."""
    theirs = Participant.objects.filter(match_id=OuterRef("match_id"), player=b).exclude(side_id=OuterRef("side_id"))
    mine = (
        Participant.objects.filter(
            player=a, match__ladder=ladder, match__status=MatchStatus.CONFIRMED, match__rated_at__isnull=False
        )
        .filter(Exists(theirs))
        .order_by("-match__played_at", "-match_id")
        .values_list("match_id", "match__played_at", "side__placement")[:limit]
    )
    rows = list(mine)
    places = dict(
        Participant.objects.filter(match_id__in=[row[0] for row in rows], player=b).values_list(
            "match_id", "side__placement"
        )
    )
    meetings = []
    for match_id, played_at, mine_placed in rows:
        placement, other = mine_placed or 0, places[match_id] or 0
        result = "win" if placement < other else "loss" if placement > other else "draw"
        meetings.append(Meeting(match_id, played_at, result))
    return meetings
