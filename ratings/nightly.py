"""Materialising RDs in the database (docs/rules.md §1, §16), and how replays account for it.

``rd_at_sql`` is the set-based twin of the engines' ``rd_at`` (``ratings.engines.glicko``):
the same IEEE operations in the same order, on the engine's own constants, so PostgreSQL
computes the very RD the Python engine does (tests compare them for every engine, with and
without the cap). Each registered engine has its growth's twin in ``GROWTH_SQL``, keyed by
its name in ``ratings.engines.ENGINES`` (a test fails when one is missing)::

    RD(t) = min( sqrt(RD² + growth · (t − rd_as_of)), RD_max )        growth per second:
        TGR, Elo     SC² / 86,400
        TrueSkill    SC² / 86,400                                     (σ on the ladder's scale)
        Glicko-1     (c² / period_days) / 86,400
        Glicko-2     (173.7178·σ)² / (period_days · 86,400)           (per player)

Materialising writes ``RD(t)`` back with ``rd_as_of = t`` for every rating whose clock is
behind ``t``. Growth composes, ``sqrt(sqrt(a² + g·s)² + g·u) = sqrt(a² + g·(s + u))``
(and the cap is monotone), so it never changes an RD at any later instant, up to the
last bit of a square root: a night run twice or a skipped night give the same numbers to
about 1e-13, not bit for bit (a write-back rounds once more).

Two rules do read the *stored* RD, and so depend on when it was last written: the queue's
clock reset keeps it as stored (docs/rules.md §13), and a result confirmed after a materialisation
that followed the game starts from it (an RD never grows backwards). ``NightlyTimeline``
lets a replay write RDs back at the same points of the rating log, with the same
operations, as the live ladder did, so replays reproduce the live ratings bit for bit.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ratings import store
from ratings.engines import (
    GLICKO2_SCALE,
    SECONDS_PER_DAY,
    Elo,
    Engine,
    Glicko1,
    Glicko2,
    GlickoFamily,
    TimedGlicko,
    TrueSkill,
)

if TYPE_CHECKING:
    from ladder.models import Ladder
    from ratings.history import Standing


def _same_growth_sql(engine: GlickoFamily, alias: str) -> tuple[str, dict[str, float]]:
    """TGR, Glicko-1 and Elo: one number for every row, the engine's own ``growth_per_second``."""
    growth = engine.growth_per_second
    if growth is None:
        raise ValueError(f"the {engine.name} engine's RD growth depends on the player: give it its own SQL twin")
    return "%(growth)s", {"growth": growth}


def _glicko2_growth_sql(engine: GlickoFamily, alias: str) -> tuple[str, dict[str, float]]:
    """Glicko-2: ``(173.7178·σ)² / (period_days · 86,400)`` for each row, as ``Glicko2._state_growth_per_second``."""
    return (
        f"((%(glicko2_scale)s * {alias}.volatility) * (%(glicko2_scale)s * {alias}.volatility) / %(period_seconds)s)",
        {"glicko2_scale": GLICKO2_SCALE, "period_seconds": engine.params.period_days * SECONDS_PER_DAY},
    )


# The SQL twin of each registered engine's RD growth, by its name in ``ratings.engines.ENGINES``.
GROWTH_SQL: dict[str, Callable[[GlickoFamily, str], tuple[str, dict[str, float]]]] = {
    TimedGlicko.name: _same_growth_sql,
    Glicko1.name: _same_growth_sql,
    Glicko2.name: _glicko2_growth_sql,
    Elo.name: _same_growth_sql,
    TrueSkill.name: _same_growth_sql,
}


def growth_sql(ladder: Ladder, alias: str = "r") -> tuple[str, dict[str, float]]:
    """RD² added per idle second, as SQL, exactly as the ladder's engine computes it."""
    twin = GROWTH_SQL.get(ladder.engine)
    engine = ladder.get_engine() if twin is not None else None
    if twin is None or not isinstance(engine, GlickoFamily):
        raise ValueError(f"ladder.engine must be one of {', '.join(GROWTH_SQL)}; got {ladder.engine!r}")
    return twin(engine, alias)


def _grown_sql(growth: str, alias: str) -> str:
    """``min(sqrt(RD² + growth·(t − rd_as_of)), RD_max)``: ``GlickoFamily.rd_at`` for a clock behind ``t``."""
    seconds = f"(%(at)s - extract(epoch FROM {alias}.rd_as_of)::float8)"
    return f"LEAST(sqrt({alias}.rd * {alias}.rd + {growth} * {seconds}), %(rd_max)s)"


def rd_at_sql(ladder: Ladder, at: datetime, alias: str = "r") -> tuple[str, dict[str, Any]]:
    """``RD(at)`` of every row as a SQL expression over the rating table aliased ``alias``.

    An RD is never grown backwards: a row whose clock is at or past ``at`` keeps its RD
    (capped, as ``rd_at`` caps it).
    """
    growth, params = growth_sql(ladder, alias)
    expression = (
        f"CASE WHEN {alias}.rd_as_of < %(at_ts)s THEN {_grown_sql(growth, alias)} "
        f"ELSE LEAST({alias}.rd, %(rd_max)s) END"
    )
    return expression, {**params, "at_ts": at, "at": at.timestamp(), "rd_max": ladder.rd_max}


def ratings_materialise(*, ladder: Ladder, at: datetime) -> int:
    """Write ``RD(at)`` back with ``rd_as_of = at`` for every rating of ``ladder`` behind ``at``.

    One statement, whatever the number of ratings. Rows are locked in primary-key order
    first, the order every rating update locks them in, so a match rated meanwhile waits
    for (or goes before) the whole materialisation and can never deadlock with it. Left
    members are included: their RD keeps growing while they are away. Returns the
    number of ratings written.
    """
    return store.rds_write_back(ladder=ladder, at=at, grown_rd=lambda: _grown_rd(ladder))


def _grown_rd(ladder: Ladder) -> tuple[str, dict[str, Any]]:
    """Rating row ``r``'s RD grown to ``%(at)s`` (capped at ``%(rd_max)s``), as SQL, and its growth's parameters."""
    growth, params = growth_sql(ladder, "r")
    return _grown_sql(growth, "r"), params


class NightlyTimeline:
    """Where a ladder's nightly runs fell in its rating log, for replays.

    A run records the ladder's last rating event when it wrote the RDs back; every later
    event saw the written values. Before a replay applies event ``e``, each of its
    players' standings is therefore written back at every midnight of a run recorded
    before ``e`` that is later than the standing's ``rd_as_of``, one run after the other,
    as the live ladder did. Growth composes, but only up to rounding: two write-backs,
    ``sqrt(sqrt(a² + g·s)² + g·u)``, differ from one, ``sqrt(a² + g·(s + u))``, in the last
    bit or two about a time in four, and later results carry the difference on. Only
    the same steps give the same bits (``Engine.rd_written_back``). At the end,
    ``materialise`` without an event does the same for every standing the replay writes,
    as the runs did to the live rows.

    A run whose midnight is not later than an earlier run's never wrote anything (every
    clock was already at or past it), so only the runs that set a new latest midnight
    are kept.
    """

    def __init__(self, runs: list[tuple[int, datetime]]) -> None:
        self._event_ids: list[int] = []
        self._midnights: list[datetime] = []
        for event_id, midnight in sorted(runs, key=lambda run: (run[0], run[1])):
            if not self._midnights or midnight > self._midnights[-1]:
                self._event_ids.append(event_id)
                self._midnights.append(midnight)
        self._seconds = [midnight.timestamp() for midnight in self._midnights]

    @classmethod
    def of(cls, ladder: Ladder) -> NightlyTimeline:
        from ladder.models import NightlyRun

        runs = NightlyRun.objects.filter(ladder=ladder).values_list("last_event_id", "midnight")
        return cls([(event_id or 0, midnight) for event_id, midnight in runs])

    def __bool__(self) -> bool:
        return bool(self._event_ids)

    def midnight_before(self, event_id: int) -> datetime | None:
        """The latest midnight materialised before event ``event_id`` was applied."""
        index = bisect.bisect_left(self._event_ids, event_id)
        return self._midnights[index - 1] if index else None

    @property
    def final(self) -> datetime | None:
        return self._midnights[-1] if self._midnights else None

    def materialise(
        self,
        engine: Engine,
        standings: dict[int, Standing],
        players: Iterable[int],
        *,
        before_event: int | None = None,
    ) -> None:
        """Write ``players``' RDs back as the live ladder had them before ``before_event``.

        Without ``before_event``: as the latest run left them (the end of a replay). The
        runs a standing's clock is behind write it back in turn, as ``ratings_materialise``
        did in SQL; runs before its clock did nothing to it (the clock is at or past
        every midnight it was written back at, as events only move it forward).
        """
        end = len(self._event_ids) if before_event is None else bisect.bisect_left(self._event_ids, before_event)
        if not end:
            return
        midnights, seconds = self._midnights, self._seconds
        last = midnights[end - 1]
        for player in players:
            standing = standings[player]
            if standing.rd_as_of < last:
                start = bisect.bisect_right(midnights, standing.rd_as_of, 0, end)
                rd = engine.rd_written_back(standing.state(), seconds[start:end])
                standings[player] = dataclasses.replace(standing, rd=rd, rd_as_of=last)
