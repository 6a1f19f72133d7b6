"""Counting statistics in Python: what a set of rating events adds to the three tables.

This is the ORM twin of ``stats.sql``'s statements (``stats.store`` chooses between them),
and the counting ``stats.services.stats_remove_matches`` subtracts on every database.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db.models import Q, QuerySet

from ladder.models import FieldScope, MatchFieldValue, Participant
from ratings.engines import win_probability
from ratings.models import RatingChange, RatingEvent
from stats import sql
from stats.models import FieldValueStat, HeadToHead, PlayerFieldStat


@dataclass(slots=True)
class Sums:
    """One row's increments: the counts, then the score and expectation sums."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    score_sum: float = 0.0
    expected_sum: float = 0.0

    def add(self, score: float, expected: float) -> None:
        self.games += 1
        self.wins += score > 0.5
        self.losses += score < 0.5
        self.draws += score == 0.5
        self.score_sum += score
        self.expected_sum += expected


@dataclass(slots=True)
class Counts:
    """What a set of events adds: head-to-head pairs, field values, and players' field values."""

    pairs: dict[tuple[int, int], list[float]] = field(default_factory=dict)  # games, low, high, draws, expected
    values: dict[tuple[int, str], Sums] = field(default_factory=lambda: defaultdict(Sums))
    players: dict[tuple[int, str, int], Sums] = field(default_factory=lambda: defaultdict(Sums))


@dataclass(frozen=True, slots=True)
class _Result:
    player: int
    side: int  # the side's index
    placement: int
    score: float
    rating: float
    rd: float


def _results(events: QuerySet[RatingEvent]) -> dict[int, list[_Result]]:
    """Each event's results by match: every player's side, placement, score and pre-match standing."""
    changes = RatingChange.objects.filter(event_id__in=events.values("pk")).values_list(
        "match_id", "player_id", "score", "rating_before", "rd_at_event"
    )
    by_match: dict[int, list[tuple[int, float, float, float]]] = defaultdict(list)
    for match_id, player, score, rating, rd in changes:
        by_match[match_id].append((player, score or 0.0, rating, rd))
    seats = {
        (match_id, player): (index, placement or 0)
        for match_id, player, index, placement in Participant.objects.filter(match_id__in=list(by_match)).values_list(
            "match_id", "player_id", "side__index", "side__placement"
        )
    }
    return {
        match_id: [
            _Result(player, *seats[match_id, player], score, rating, rd) for player, score, rating, rd in sorted(rows)
        ]
        for match_id, rows in by_match.items()
    }


def count(events: QuerySet[RatingEvent]) -> Counts:
    """The sums ``events`` add, computed as ``stats.sql``'s statements compute them."""
    counts = Counts()
    results = _results(events)
    expected: dict[tuple[int, int], float] = {}
    for match_id, players in results.items():
        for me in players:
            chances = []
            for other in players:
                if other.side == me.side:
                    continue
                p = win_probability(me.rating, me.rd, other.rating, other.rd)
                chances.append(p)
                if me.player < other.player:
                    pair = counts.pairs.setdefault((me.player, other.player), [0, 0, 0, 0, 0.0])
                    pair[0] += 1
                    pair[1] += me.placement < other.placement
                    pair[2] += me.placement > other.placement
                    pair[3] += me.placement == other.placement
                    pair[4] += p
            expected[match_id, me.player] = sum(chances) / len(chances) if chances else 0.0
    values = MatchFieldValue.objects.filter(match_id__in=list(results), field__kind__in=sql.COUNTED_KINDS)
    for match_id, player, field_id, value, scope in values.values_list(
        "match_id", "player_id", "field_id", "value", "field__scope"
    ):
        players = results[match_id]
        if scope == FieldScope.PLAYER:
            mine = next((result for result in players if result.player == player), None)
            if mine is None:
                continue
            counts.values[field_id, value].add(mine.score, expected[match_id, player])
            counts.players[field_id, value, player].add(mine.score, expected[match_id, player])
            continue
        favourite = min(players, key=lambda r: (-expected[match_id, r.player], r.side, r.player))
        counts.values[field_id, value].add(favourite.score, expected[match_id, favourite.player])
        for result in players:
            counts.players[field_id, value, result.player].add(result.score, expected[match_id, result.player])
    return counts


R = TypeVar("R", FieldValueStat, PlayerFieldStat)
RECORD_FIELDS = ["games", "wins", "losses", "draws", "score_sum", "expected_sum"]


def add(ladder_id: int, counts: Counts) -> None:
    """Add ``counts`` to the rows of ``ladder_id``, creating those that do not exist yet."""
    _add_pairs(ladder_id, counts.pairs)
    _add_records(FieldValueStat, ladder_id, ("field_id", "value"), counts.values)
    _add_records(PlayerFieldStat, ladder_id, ("field_id", "value", "player_id"), counts.players)


def _add_pairs(ladder_id: int, pairs: dict[tuple[int, int], list[float]]) -> None:
    if not pairs:
        return
    keys = Q()
    for low, high in pairs:
        keys |= Q(player_low_id=low, player_high_id=high)
    found = HeadToHead.objects.filter(keys, ladder_id=ladder_id)
    rows = {(row.player_low_id, row.player_high_id): row for row in found}
    new = []
    for key, (games, low_wins, high_wins, draws, expected) in pairs.items():
        row = rows.get(key) or HeadToHead(ladder_id=ladder_id, player_low_id=key[0], player_high_id=key[1])
        row.games += int(games)
        row.low_wins += int(low_wins)
        row.high_wins += int(high_wins)
        row.draws += int(draws)
        row.expected_low_sum += expected
        if key not in rows:
            new.append(row)
    HeadToHead.objects.bulk_create(new)
    HeadToHead.objects.bulk_update(list(rows.values()), ["games", "low_wins", "high_wins", "draws", "expected_low_sum"])


def _add_records(model: type[R], ladder_id: int, names: tuple[str, ...], sums: dict[tuple[Any, ...], Sums]) -> None:
    if not sums:
        return
    keys = Q()
    for key in sums:
        keys |= Q(**dict(zip(names, key, strict=True)))
    existing = {tuple(getattr(row, name) for name in names): row for row in model.objects.filter(keys)}
    new = []
    for key, delta in sums.items():
        row = existing.get(key) or model(ladder_id=ladder_id, **dict(zip(names, key, strict=True)))
        for name in RECORD_FIELDS:
            setattr(row, name, getattr(row, name) + getattr(delta, name))
        if key not in existing:
            new.append(row)
    model.objects.bulk_create(new)
    model.objects.bulk_update(list(existing.values()), RECORD_FIELDS)
