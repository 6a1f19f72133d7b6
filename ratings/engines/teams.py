"""Team composites (docs/rules.md §8, from the Widelands team-rating proposal).

A team counts as ``n`` equal players with the same total power ``Σ β^Ri``,
``β = 10^(1/400)``. Everything is computed as a log-sum-exp around the strongest member,
so ratings of 5,000 or −1,000 neither overflow nor lose the weaker members.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

LN_BETA = math.log(10.0) / 400.0  # ln β, β = 10^(1/400) ≈ 1.005773 (docs/rules.md §8)


def composite(ratings: Sequence[float], rds: Sequence[float]) -> tuple[float, float]:
    """``R = (ln Σβ^Ri − ln n)/ln β`` and ``RD = sqrt(Σ (β^Ri/Σβ^Rj)² RDi²)`` (docs/rules.md §8).

    Returns ``(rating, rd)``. A one-member team is that member exactly. Members must be
    given already padded (``pad``); ``ratings`` and ``rds`` have the same length ≥ 1.
    """
    n = len(ratings)
    if n == 0:
        raise ValueError("team must have at least one player, got an empty team")
    if n != len(rds):
        raise ValueError(f"rds must have one entry per rating: {n} ratings, {len(rds)} rds")
    if n == 1:
        return ratings[0], rds[0]
    top = max(ratings)
    weights = [math.exp((r - top) * LN_BETA) for r in ratings]
    total = math.fsum(weights)
    rating = top + (math.log(total) - math.log(n)) / LN_BETA
    variance = math.fsum((w / total) ** 2 * rd * rd for w, rd in zip(weights, rds, strict=True))
    return rating, math.sqrt(variance)


def composite_shares(ratings: Sequence[float], rds: Sequence[float]) -> tuple[float, float, list[float]]:
    """``composite`` and ``power_shares`` at once, each power computed once (the team update's hot path).

    Gives the same bits as the two functions: the same weights, sums and order of operations.
    """
    n = len(ratings)
    top = max(ratings)
    weights = [math.exp((r - top) * LN_BETA) for r in ratings]
    total = math.fsum(weights)
    rating = top + (math.log(total) - math.log(n)) / LN_BETA
    shares = [w / total for w in weights]
    variance = math.fsum((w / total) ** 2 * rd * rd for w, rd in zip(weights, rds, strict=True))
    return rating, math.sqrt(variance), shares


def power_shares(ratings: Sequence[float]) -> list[float]:
    """Each member's share ``u_i = β^Ri / Σβ^Rj`` of the team's power (docs/rules.md §8).

    ``u_i`` is also ``∂R/∂Ri``, how far the composite moves when one member moves one point,
    which is why the Bayesian team update (``team_delta="bayes"``) weighs members by it.
    Members must be given already padded; the shares sum to 1.
    """
    top = max(ratings)
    weights = [math.exp((r - top) * LN_BETA) for r in ratings]
    total = math.fsum(weights)
    return [w / total for w in weights]


def pad(
    ratings: Sequence[float], rds: Sequence[float], size: int, *, null_rating: float, null_rd: float
) -> tuple[list[float], list[float]]:
    """Fill a team up to ``size`` with null players ``(R0, RD0)`` (docs/rules.md §8)."""
    missing = size - len(ratings)
    if missing < 0:
        raise ValueError(f"size must be at least the team's {len(ratings)} players, got {size}")
    return [*ratings, *([null_rating] * missing)], [*rds, *([null_rd] * missing)]


def null_influence_bound(strongest: float, nulls: int, null_rating: float) -> float:
    """Largest change ``k`` null players can make to a team's total power, in rating points.

    ``ln(1 + k·β^(R0 − Rmax)) / ln β``: adding null players changes a composite only
    through its head count ``ln n`` plus at most this much (docs/rules.md §8).
    """
    return math.log1p(nulls * math.exp((null_rating - strongest) * LN_BETA)) / LN_BETA
