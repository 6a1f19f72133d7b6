"""Display scales (SPEC.md §8): GLIXARE, TR and the conservative rating."""

from __future__ import annotations

import math
from typing import NamedTuple

from ratings.engines.probability import logistic10
from ratings.engines.values import check_number

_GXE_C = 2500.0 * (64.0 * math.pi**2 + 147.0 * math.log(10.0) ** 2)
_THREE_LN10_SQUARED = 3.0 * math.log(10.0) ** 2


def _curve(rating: float, rd: float) -> float:
    """``1 / (1 + 10^((1500 − r)π / sqrt(3·ln(10)²·RD² + 2500(64π² + 147·ln(10)²))))``.

    The chance to beat a 1500/350 player (seed 000 GLIXARE; seed 001 TR, eq. 6).
    """
    return logistic10((rating - 1500.0) * math.pi / math.sqrt(_THREE_LN10_SQUARED * rd * rd + _GXE_C))


def gxe(rating: float, rd: float) -> float:
    """GLIXARE in percent, rounded to two decimals (seed 000, SPEC §8)."""
    return round(100.0 * _curve(rating, rd), 2)


def tr(rating: float, rd: float) -> float:
    """Tetr.io's TR, the GLIXARE curve scaled to 25,000 (seed 001 eq. 6; r = 1500 → 12,500)."""
    return 25_000.0 * _curve(rating, rd)


def conservative(rating: float, rd: float) -> float:
    """``r − 2·RD`` (TrueSkill's μ − kσ with k = 2; seed 004, SPEC §8)."""
    return rating - 2.0 * rd


def is_provisional(rd: float, threshold: float = 100.0) -> bool:
    """A rating is provisional while its current RD is above the threshold (SPEC §1)."""
    return rd > threshold


class Display(NamedTuple):
    gxe: float
    tr: float
    conservative: float
    provisional: bool


def display(rating: float, rd: float, provisional_rd: float = 100.0) -> Display:
    """All display values for a rating whose RD is already the RD *now* (SPEC §8)."""
    rating = check_number("rating", rating)
    rd = check_number("rd", rd, positive=True)
    provisional_rd = check_number("provisional_rd", provisional_rd, positive=True)
    return Display(gxe(rating, rd), tr(rating, rd), conservative(rating, rd), is_provisional(rd, provisional_rd))
