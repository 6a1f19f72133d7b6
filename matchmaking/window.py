"""Whom a waiting search may meet (docs/rules.md §13): its rating window and the candidates in it.

The 1 v 1 pairing (``pairing``), the forming of team and free-for-all games (``forming``)
and the requeue after a missed ready check (``lifecycle``) read it; it imports none of them.

The window turns the ladder's win-probability window into a rating range with the engines'
inverse win probability (using the largest RD an opponent can have, so the range never
misses anyone). ``candidates`` reads the nearest waiting searches in that range from an
index, without locks (on PostgreSQL one statement); the caller checks each exactly with
both RDs inflated to now. Only when someone fits are the searches claimed
(``store.claim``) with ``SELECT … FOR UPDATE SKIP LOCKED`` and re-checked as still
waiting, inside the transaction that forms the game: a search being placed by another
process is skipped, never waited for, so nobody is placed twice and two searches never
deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from ladder import formats
from ladder.models import Ladder
from matchmaking import attempts, store
from matchmaking.models import QueueEntry
from ratings.engines import Engine, RatingState
from ratings.engines.balance import rating_gap_for_probability

CANDIDATES_EACH_WAY = 16


def window_min_probability(ladder: Ladder, waited: timedelta) -> float:
    """The lowest acceptable win chance after ``waited``: widens by the ladder's speed, to its bound."""
    widened = ladder.queue_min_win_probability - ladder.queue_widening_per_minute * waited.total_seconds() / 60.0
    return max(widened, ladder.queue_widest_min_win_probability)


class Candidate(NamedTuple):
    """A waiting search as the pairing reads it: what the exact check and the claim need.

    ``rd_as_of`` and ``joined_at`` are POSIX times in seconds, as the engines take them.
    """

    pk: int
    player_id: int
    rating: float
    rd: float
    volatility: float
    rd_as_of: float
    joined_at: float
    max_rating_gap: int | None
    party_id: int | None = None
    party_size: int = 1
    formats: int = formats.DUEL.bit


def rd_now(engine: Engine, entry: QueueEntry, at: float) -> float:
    """The search's RD inflated to POSIX time ``at`` with its own volatility (Glicko-2's growth depends on it)."""
    return engine.rd_at(RatingState(entry.rating, entry.rd, entry.volatility, entry.rd_as_of.timestamp()), at)


def window_bounds(ladder: Ladder, entry: QueueEntry, rd: float, p_min: float) -> tuple[float, float]:
    """The ratings whose win chance against ``entry`` (its RD ``rd`` now) is at least ``p_min``, within its limit."""
    gap = abs(rating_gap_for_probability(p_min, rd, ladder.rd_max, ladder.get_engine().summed_beta))
    if entry.max_rating_gap is not None:
        gap = min(gap, float(entry.max_rating_gap))
    return entry.rating - gap, entry.rating + gap


def rating_window(ladder: Ladder, entry: QueueEntry, now: datetime) -> tuple[float, float]:
    """The ratings an opponent may have (for display and for the indexed search)."""
    rd = rd_now(ladder.get_engine(), entry, now.timestamp())
    return window_bounds(ladder, entry, rd, window_min_probability(ladder, now - entry.joined_at))


def arrived(ladder: Ladder, entry: QueueEntry, now: datetime, entries: Sequence[int]) -> None:
    """A search that formed no game at once starts waiting: its window's bands are stamped, so the
    searches it may meet try at their next poll (``attempts``). Its own band is among them, so its
    own next poll tries too; so does each of ``entries`` (its party's), whose bands may not be."""
    attempts.stamp(ladder, *rating_window(ladder, entry, now))
    attempts.try_next([pk for pk in entries if pk != entry.pk], now)


def candidates(
    ladder: Ladder,
    entry: QueueEntry,
    low: float,
    high: float,
    now: datetime,
    *,
    bit: int = formats.DUEL.bit,
    each_way: int = CANDIDATES_EACH_WAY,
) -> list[Candidate]:
    """The waiting searches for format ``bit`` nearest ``entry``'s rating in ``[low, high]``, ``each_way`` each way.

    Left out: the player's own search, recent opponents (rematch cooldown), blocks in
    either direction, accounts sharing an address when the ladder keeps them apart, unmarked
    accounts for a marked player and marked ones for an unmarked player, and searches whose own
    ±N limit refuses the gap (so they do not crowd out those who would accept).
    """
    rows = store.candidates(ladder=ladder, entry=entry, low=low, high=high, now=now, bit=bit, each_way=each_way)
    return [Candidate(*row) for row in rows]
