"""Display scales (docs/rules.md §10): GLIXARE, TR and the conservative rating.

The constants of the GLIXARE curve are stated here once: the ranking's SQL twin
(``ladder.standings.ranking``) binds these very floats, so PostgreSQL sorts by the same ``x``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ratings.engines.probability import logistic10
from ratings.engines.values import check_number

GXE_MIDPOINT = 1500.0  # the rating GLIXARE and TR put at 50%: the average player of the curve
GXE_RD_FACTOR = 3.0 * math.log(10.0) ** 2  # 3·ln(10)², the weight of RD² in the curve
GXE_C = 2500.0 * (64.0 * math.pi**2 + 147.0 * math.log(10.0) ** 2)  # 2500·(64π² + 147·ln(10)²)
CONSERVATIVE_K = 2.0  # the conservative rating is r − k·RD


def gxe_x(rating: float, rd: float) -> float:
    """``x = (r − 1500)·π / sqrt(3·ln(10)²·RD² + 2500·(64π² + 147·ln(10)²))``, GLIXARE's exponent.

    GLIXARE and TR are ``1/(1 + 10^(−x))`` scaled, so both increase with ``x``: a leaderboard
    on either sorts by ``x`` itself (docs/rules.md §11).
    """
    return (rating - GXE_MIDPOINT) * math.pi / math.sqrt(GXE_RD_FACTOR * rd * rd + GXE_C)


def _curve(rating: float, rd: float) -> float:
    """``1 / (1 + 10^(−x))``: the chance to beat a 1500/350 player (docs/rules.md §10)."""
    return logistic10(gxe_x(rating, rd))


def gxe(rating: float, rd: float) -> float:
    """GLIXARE in percent, rounded to two decimals (docs/rules.md §10)."""
    return round(100.0 * _curve(rating, rd), 2)


def tr(rating: float, rd: float) -> float:
    """Tetr.io's TR, the GLIXARE curve scaled to 25,000 (r = 1500 → 12,500; docs/rules.md §10)."""
    return 25_000.0 * _curve(rating, rd)


def conservative(rating: float, rd: float) -> float:
    """``r − 2·RD`` (TrueSkill's μ − kσ with k = 2; docs/rules.md §10)."""
    return rating - CONSERVATIVE_K * rd


def is_provisional(rd: float, threshold: float = 100.0) -> bool:
    """A rating is provisional while its current RD is above the threshold (docs/rules.md §12)."""
    return rd > threshold


class Display(NamedTuple):
    gxe: float
    tr: float
    conservative: float
    provisional: bool


def display(rating: float, rd: float, provisional_rd: float = 100.0) -> Display:
    """All display values for a rating whose RD is already the RD *now* (docs/rules.md §10)."""
    rating = check_number("rating", rating)
    rd = check_number("rd", rd, positive=True)
    provisional_rd = check_number("provisional_rd", provisional_rd, positive=True)
    return Display(gxe(rating, rd), tr(rating, rd), conservative(rating, rd), is_provisional(rd, provisional_rd))
