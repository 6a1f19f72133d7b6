"""Who is ranked, and in which order: one rule, in Python and in SQL side by side.

The live leaderboard (``ladder.selectors``) and the nightly snapshot
(``ladder.services.nightly``) rank in PostgreSQL with the SQL twins here, and in Python
on other databases; both use what is here, so a player's rank change between the two
compares like with like.

**Ranked** (a ladder's settings): a member whose RD at that instant is at most
``provisional_rd`` (SPEC §1), with at least ``ranked_min_games`` games and, unless
``ranked_max_idle_days`` is 0, a game within that many days.

**Order**: by the ladder's display scale, highest first, then rating, then the rating
row's id. GLIXARE and TR are the same increasing curve of
``x = (r − 1500)·π / sqrt(3·ln(10)²·RD² + 2500·(64π² + 147·ln(10)²))`` (SPEC §8), so both
sort by ``x`` itself: the shown GLIXARE is rounded to two decimals, and ranking by the
rounded value would order two players a hair apart by rating instead.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ladder.models import LeaderboardScale

if TYPE_CHECKING:
    from ladder.models import Ladder

# The constants of ratings.engines.display._curve, written the same way (so bit-identical).
_THREE_LN10_SQUARED = 3.0 * math.log(10.0) ** 2
_GXE_C = 2500.0 * (64.0 * math.pi**2 + 147.0 * math.log(10.0) ** 2)


def sort_value(scale: str, rating: float, rd: float) -> float:
    """The value a leaderboard on ``scale`` sorts by, highest first."""
    if scale == LeaderboardScale.CONSERVATIVE:
        return rating - 2.0 * rd
    return (rating - 1500.0) * math.pi / math.sqrt(_THREE_LN10_SQUARED * rd * rd + _GXE_C)


def rank_key(scale: str, rating: float, rd: float, rating_id: int) -> tuple[float, float, int]:
    """Sort key of a ranked player: ``sorted(..., key=rank_key)`` gives rank 1 first."""
    return (-sort_value(scale, rating, rd), -rating, rating_id)


def sort_value_sql(scale: str, rd: str, alias: str = "r") -> tuple[str, dict[str, float]]:
    """``sort_value`` as SQL, with ``rd`` an SQL expression for the RD at the instant."""
    if scale == LeaderboardScale.CONSERVATIVE:
        return f"({alias}.rating - 2.0 * ({rd}))", {}
    return (
        f"(({alias}.rating - 1500.0) * %(pi)s / sqrt(%(k3)s * ({rd}) * ({rd}) + %(gxe_c)s))",
        {"pi": math.pi, "k3": _THREE_LN10_SQUARED, "gxe_c": _GXE_C},
    )


def ranked_sql(ladder: Ladder, at: datetime, rd: str, alias: str = "r") -> tuple[str, dict[str, Any]]:
    """The SQL condition "ranked at ``at``" for a row of the rating table (see the module docstring)."""
    conditions = [f"{alias}.is_active", f"({rd}) <= %(provisional_rd)s", f"{alias}.games >= %(min_games)s"]
    params: dict[str, Any] = {"provisional_rd": ladder.provisional_rd, "min_games": ladder.ranked_min_games}
    if ladder.ranked_max_idle_days:
        conditions.append(f"{alias}.last_played_at >= %(active_since)s")
        params["active_since"] = at - timedelta(days=ladder.ranked_max_idle_days)
    return " AND ".join(conditions), params
