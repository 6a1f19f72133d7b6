"""Win probability (docs/rules.md §2, the Timed Glicko post's ``WinProb``) and its inverse.

All logistic curves here are evaluated so that no power of ten ever overflows: for any
finite rating difference the result is a probability in [0, 1], never an exception.
"""

from __future__ import annotations

import math

Q = math.log(10.0) / 400.0  # Glickman's q = ln(10)/400
_THREE_Q2_OVER_PI2 = 3.0 * Q * Q / (math.pi * math.pi)
_LN10 = math.log(10.0)


def logistic10(x: float) -> float:
    """``1 / (1 + 10^(−x))`` without overflow (the shape of every Glicko/Elo expectation)."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-_LN10 * x))
    z = math.exp(_LN10 * x)
    return z / (1.0 + z)


def g(rd: float) -> float:
    """Glicko's attenuation ``g(RD) = 1 / sqrt(1 + 3q²RD²/π²)`` (Glickman 1999, step 2)."""
    return 1.0 / math.sqrt(1.0 + _THREE_Q2_OVER_PI2 * rd * rd)


def combined_g(rd_a: float, rd_b: float) -> float:
    """``G(RDa, RDb) = 1 / sqrt(1 + 3q²(RDa² + RDb²)/π²)`` (docs/rules.md §2, ``WinProb``)."""
    return 1.0 / math.sqrt(1.0 + _THREE_Q2_OVER_PI2 * (rd_a * rd_a + rd_b * rd_b))


def win_probability(rating_a: float, rd_a: float, rating_b: float, rd_b: float) -> float:
    """``P(a beats b) = 1 / (1 + 10^(−G·(ra − rb)/400))`` with both RDs (docs/rules.md §2).

    The RDs must already be the RDs at the instant of interest (``time.tgr_rd`` etc.).
    ``P(a beats b) + P(b beats a) = 1`` exactly up to rounding.
    """
    return logistic10(combined_g(rd_a, rd_b) * (rating_a - rating_b) / 400.0)


def recalibrated(probability: float, slope: float) -> float:
    """``σ(slope·logit p)``: a win chance with its confidence scaled by ``slope`` (docs/backtests.md).

    A ladder's backtest fits the slope on its own games (Platt scaling without an intercept,
    since a ladder's sides have no order): below 1 shrinks chances towards ½ for ratings
    that were too sure. Symmetric: ``recalibrated(1 − p) = 1 − recalibrated(p)``, and a
    slope of 1 returns ``p`` unchanged. ``p`` of 0 or 1 stays where it is.
    """
    if slope == 1.0 or probability <= 0.0 or probability >= 1.0:
        return probability
    x = slope * math.log(probability / (1.0 - probability))
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def rating_difference_for_probability(probability: float, rd_a: float, rd_b: float) -> float:
    """The ``ra − rb`` at which ``P(a beats b)`` equals ``probability`` (inverse of docs/rules.md §2).

    ``Δ = 400 / G · log10(p / (1 − p))``: negative below ½, positive above. The queue
    turns a window such as 15%–85% into the rating range ``[r − |Δ(0.15)|, r + |Δ(0.85)|]``
    for an indexed search. Raises ``ValueError`` naming ``probability`` outside (0, 1).
    """
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be strictly between 0 and 1, got {probability!r}")
    for name, value in (("rd_a", rd_a), ("rd_b", rd_b)):
        if not (value > 0.0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number above 0, got {value!r}")
    return 400.0 / combined_g(rd_a, rd_b) * math.log10(probability / (1.0 - probability))


def expected_score(rating: float, opponent_rating: float, opponent_rd: float) -> float:
    """Glicko's ``E = 1 / (1 + 10^(−g(RDj)(r − rj)/400))`` (Glickman 1999, step 2)."""
    return logistic10(g(opponent_rd) * (rating - opponent_rating) / 400.0)


def elo_expected_score(rating: float, opponent_rating: float) -> float:
    """Elo's ``E = 1 / (1 + 10^((rb − ra)/400))`` (docs/rules.md §7)."""
    return logistic10((rating - opponent_rating) / 400.0)
