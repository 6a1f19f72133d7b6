"""When a poll may skip its attempt to pair or form a game: nobody it could meet has arrived since its last.

Every poll of a waiting search (each searcher's page polls every 2 seconds) used to try to
pair or form a game: a candidate read in 1 v 1, one in the team and free-for-all formats,
and the windows of some fifty candidates computed. Almost every time nothing had changed.

A game with a search can only become possible when

1. a search **arrives** (a join that formed no game, or a player put back in the queue after a
   missed ready check) whose rating window reaches the searcher's rating: every player in a
   game with them must be inside their window and they inside every player's window; or
2. **time passes**: windows widen as players wait, RD grows, a rematch cooldown ends; and
   rarer changes (a block lifted, a search that left letting a farther candidate in).

For (1), an arrival stamps its window on the ladder's rating *bands* of ``BAND`` points: one
cache key a band, holding a token new with each arrival (a window wider than ``MAX_BANDS``
bands stamps one key for the whole ladder instead). For (2), an attempt is good for at most
``RETRY``. A poll reads its band's token, the ladder's and its own last attempt in one cache
round trip; when the tokens are those its last attempt saw and that attempt is less than
``RETRY`` old, it skips: it would read the same searches. Otherwise it tries, and records what
it saw. So a game that a new arrival makes possible is tried at the next poll, and one that
time makes possible within ``RETRY`` (windows widen over minutes, so 10 s is a small share).
An arrival's own band is in its window, so a search started again on the same row (a search
row is reused) never skips on its previous search's record.

An attempt whose claim lost to another process (``SKIP LOCKED``) records nothing that lets
the next poll skip; nor does the join of a party for its other members, whose bands the
joiner's window may not reach. Without a shared cache (the embedded default's per-process memory) a web
process sees only its own arrivals; the others' are tried within ``RETRY``.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.cache import cache as site_cache

from ladder.models import Ladder

BAND = 200  # rating points a key covers
MAX_BANDS = 20  # a window wider than this many bands stamps the ladder's one key
RETRY = timedelta(seconds=10)
_RETRY_SECONDS = RETRY.total_seconds()
_UNSEEN = "-"  # a band nobody has stamped yet
_TRY_NEXT = ("try", "next")  # tokens no poll reads: the next poll tries


def _band_key(ladder_id: int, band: int) -> str:
    return f"queue:arrivals:{ladder_id}:{band}"


def _wide_key(ladder_id: int) -> str:
    return f"queue:arrivals:{ladder_id}:all"


def _attempt_key(entry_id: int) -> str:
    return f"queue:attempt:{entry_id}"


@dataclass(frozen=True, slots=True)
class Attempt:
    """A search's last attempt that formed nothing: the tokens it saw (``_TRY_NEXT``: the next poll
    tries again), when, and the players it found per team or free-for-all format ("3 of 4 found")."""

    tokens: tuple[str, str]
    at: float
    found: dict[str, int]


@dataclass(frozen=True, slots=True)
class Seen:
    """What a poll read before its attempt: the tokens it compares, and its last attempt."""

    tokens: tuple[str, str]
    last: Attempt | None


def look(ladder: Ladder, entry_id: int, rating: float) -> Seen:
    """The arrivals' tokens around ``rating`` and the search's last attempt: one cache round trip."""
    keys = [_wide_key(ladder.pk), _band_key(ladder.pk, math.floor(rating / BAND)), _attempt_key(entry_id)]
    found = site_cache.get_many(keys)
    tokens = (str(found.get(keys[0], _UNSEEN)), str(found.get(keys[1], _UNSEEN)))
    last = found.get(keys[2])
    return Seen(tokens, last if isinstance(last, Attempt) else None)


def may_skip(seen: Seen, now: datetime) -> bool:
    """True when the last attempt saw these tokens and is less than ``RETRY`` old at ``now``."""
    last = seen.last
    return last is not None and last.tokens == seen.tokens and 0.0 <= now.timestamp() - last.at < _RETRY_SECONDS


def last_found(entry_id: int) -> dict[str, int]:
    """The players a search's last attempt found per format, for a reader other than its poll."""
    last = site_cache.get(_attempt_key(entry_id))
    return last.found if isinstance(last, Attempt) else {}


def save(entry_id: int, now: datetime, found: dict[str, int], tokens: tuple[str, str]) -> None:
    """Record an attempt that formed nothing and saw ``tokens``."""
    site_cache.set(_attempt_key(entry_id), Attempt(tokens, now.timestamp(), found), timeout=int(_RETRY_SECONDS))


def try_next(entry_ids: Sequence[int], now: datetime) -> None:
    """The next poll of each of these searches tries, whatever the tokens (one cache round trip)."""
    if entry_ids:
        attempt = Attempt(_TRY_NEXT, now.timestamp(), {})
        site_cache.set_many(dict.fromkeys(map(_attempt_key, entry_ids), attempt), timeout=int(_RETRY_SECONDS))


def stamp(ladder: Ladder, low: float, high: float) -> None:
    """A search arrived with the window ``[low, high]``: its bands get a new token (one cache round
    trip). The keys do not expire: a ladder has a few dozen bands, each overwritten at each arrival."""
    site_cache.set_many(arrival_stamps(ladder, low, high), timeout=None)


def arrival_stamps(ladder: Ladder, low: float, high: float) -> dict[str, str]:
    """The keys a search arriving with the window ``[low, high]`` stamps, each with one new token."""
    token = uuid.uuid4().hex
    if not (math.isfinite(low) and math.isfinite(high)):
        return {_wide_key(ladder.pk): token}
    first, last = math.floor(low / BAND), math.floor(high / BAND)
    if last - first + 1 > MAX_BANDS:
        return {_wide_key(ladder.pk): token}
    return {_band_key(ladder.pk, band): token for band in range(first, last + 1)}
