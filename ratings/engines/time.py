"""Rating deviation growth with idle time (SPEC.md §1, §4).

Every function takes the stored RD and the idle time, and returns the RD at the later
instant. Materialising that value (storing it with the later instant as ``rd_as_of``)
never changes it, because the growth composes: growing for a then b equals growing for
a + b, up to the cap.
"""

from __future__ import annotations

import math

SECONDS_PER_DAY = 86_400.0
GLICKO2_SCALE = 400.0 / math.log(10.0)  # 173.7178..., Glickman's Glicko-2 rating scale


def _check(rd: float, elapsed: float, rd_max: float) -> None:
    if not rd > 0:
        raise ValueError(f"rd must be above 0, got {rd!r}")
    if not rd_max > 0:
        raise ValueError(f"rd_max must be above 0, got {rd_max!r}")
    if elapsed < 0:
        raise ValueError(f"elapsed time must not be negative, got {elapsed!r}")


def tgr_rd(rd: float, *, days: float, sc: float, rd_max: float) -> float:
    """Timed Glicko: ``min(sqrt(RD² + SC²·days), RD_max)`` with fractional days (SPEC §1)."""
    _check(rd, days, rd_max)
    return min(math.sqrt(rd * rd + sc * sc * days), rd_max)


def glicko1_rd(rd: float, *, periods: float, c: float, rd_max: float) -> float:
    """Glicko-1 step 1: ``min(sqrt(RD² + c²·t), RD_max)``, t in (fractional) rating periods."""
    _check(rd, periods, rd_max)
    return min(math.sqrt(rd * rd + c * c * periods), rd_max)


def glicko2_rd(rd: float, *, periods: float, volatility: float, rd_max: float) -> float:
    """Glicko-2 step 6 (pre-period φ* = sqrt(φ² + σ²)) over fractional periods, in rating units.

    φ = RD / 173.7178, so ``RD* = 173.7178 · sqrt(φ² + σ²·t)``, capped at RD_max.
    """
    _check(rd, periods, rd_max)
    phi = rd / GLICKO2_SCALE
    return min(GLICKO2_SCALE * math.sqrt(phi * phi + volatility * volatility * periods), rd_max)
