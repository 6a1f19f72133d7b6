"""How good a list of predictions is: log-loss, Brier, accuracy, calibration, by rating band.

Every metric takes P(a beats b) and a's score, 1, ½ or 0. A draw is half a win and half a
loss everywhere: its log-loss is ``−(ln p + ln(1 − p))/2``, its Brier term ``(p − ½)²``,
it counts as half right in the accuracy (so does a prediction of exactly 50%), and it
observes ½ in a reliability bin. Nothing is dropped, so every predictor is scored on the
same matches and two can be compared pairwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

EPSILON = 1e-15  # log-loss clips p to [1e-15, 1 − 1e-15], as scikit-learn does
BINS = 10
# Bands of the favourite's (the higher) pre-match rating: below 1400, then 200 wide, 1800 up.
BAND_EDGES = (1400.0, 1600.0, 1800.0)
BAND_NAMES = ("<1400", "1400-1600", "1600-1800", ">=1800")


class Bin(NamedTuple):
    """One reliability bin: the mean prediction, the observed score and how many matches."""

    low: float
    high: float
    predicted: float
    observed: float
    n: int


class Metrics(NamedTuple):
    log_loss: float
    brier: float
    accuracy: float
    ece: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return self._asdict()


def _check(probabilities: Sequence[float], outcomes: Sequence[float]) -> None:
    if len(probabilities) != len(outcomes):
        raise ValueError(f"outcomes must match probabilities: {len(probabilities)} predictions, got {len(outcomes)}")
    if not probabilities:
        raise ValueError("probabilities must hold at least one prediction, got none")


def log_losses(probabilities: Sequence[float], outcomes: Sequence[float]) -> list[float]:
    """Each match's ``−(y·ln p + (1 − y)·ln(1 − p))``, p clipped to [1e-15, 1 − 1e-15]."""
    _check(probabilities, outcomes)
    losses = []
    for p, y in zip(probabilities, outcomes, strict=True):
        p = min(max(p, EPSILON), 1.0 - EPSILON)
        losses.append(-(y * math.log(p) + (1.0 - y) * math.log(1.0 - p)))
    return losses


def log_loss(probabilities: Sequence[float], outcomes: Sequence[float]) -> float:
    """The mean log-loss (cross-entropy); always 50% scores ln 2 ≈ 0.6931."""
    losses = log_losses(probabilities, outcomes)
    return math.fsum(losses) / len(losses)


def brier(probabilities: Sequence[float], outcomes: Sequence[float]) -> float:
    """The mean ``(p − y)²``; always 50% scores 0.25."""
    _check(probabilities, outcomes)
    return math.fsum((p - y) ** 2 for p, y in zip(probabilities, outcomes, strict=True)) / len(outcomes)


def accuracy(probabilities: Sequence[float], outcomes: Sequence[float]) -> float:
    """The share of matches whose favourite won; a draw or a 50% prediction counts half."""
    _check(probabilities, outcomes)
    right = 0.0
    for p, y in zip(probabilities, outcomes, strict=True):
        if y == 0.5 or p == 0.5:
            right += 0.5
        elif (p > 0.5) == (y == 1.0):
            right += 1.0
    return right / len(outcomes)


def reliability(probabilities: Sequence[float], outcomes: Sequence[float], bins: int = BINS) -> list[Bin]:
    """``bins`` equal-width bins of the prediction (the last one holds p = 1); empty bins are left out."""
    _check(probabilities, outcomes)
    predicted = [0.0] * bins
    observed = [0.0] * bins
    counts = [0] * bins
    for p, y in zip(probabilities, outcomes, strict=True):
        index = min(int(p * bins), bins - 1)
        predicted[index] += p
        observed[index] += y
        counts[index] += 1
    return [
        Bin(index / bins, (index + 1) / bins, predicted[index] / count, observed[index] / count, count)
        for index, count in enumerate(counts)
        if count
    ]


def ece(probabilities: Sequence[float], outcomes: Sequence[float], bins: int = BINS) -> float:
    """Expected calibration error: ``Σ n_bin/n · |observed − predicted|`` over the reliability bins."""
    table = reliability(probabilities, outcomes, bins)
    total = sum(row.n for row in table)
    return math.fsum(row.n * abs(row.observed - row.predicted) for row in table) / total


def metrics(probabilities: Sequence[float], outcomes: Sequence[float]) -> Metrics:
    """Every headline metric of one predictor."""
    return Metrics(
        log_loss(probabilities, outcomes),
        brier(probabilities, outcomes),
        accuracy(probabilities, outcomes),
        ece(probabilities, outcomes),
        len(outcomes),
    )


def band(rating: float) -> str:
    """The band name of a favourite's rating (``BAND_NAMES``)."""
    for edge, name in zip(BAND_EDGES, BAND_NAMES, strict=False):
        if rating < edge:
            return name
    return BAND_NAMES[-1]


def by_band(
    probabilities: Sequence[float], outcomes: Sequence[float], favourites: Sequence[float]
) -> dict[str, Metrics]:
    """``metrics`` per band of the favourite's pre-match rating; empty bands are left out."""
    _check(probabilities, outcomes)
    groups: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in BAND_NAMES}
    for p, y, rating in zip(probabilities, outcomes, favourites, strict=True):
        group = groups[band(rating)]
        group[0].append(p)
        group[1].append(y)
    return {name: metrics(ps, ys) for name, (ps, ys) in groups.items() if ps}


class Difference(NamedTuple):
    """``mean`` of log-loss(first) − log-loss(second) per match and its paired standard error."""

    mean: float
    se: float

    @property
    def significant(self) -> bool:
        """The issue's rule: the margin is larger than twice its paired standard error."""
        return abs(self.mean) > 2.0 * self.se


def paired_difference(first: Sequence[float], second: Sequence[float], outcomes: Sequence[float]) -> Difference:
    """The paired log-loss difference of two predictors on the same matches.

    With ``d_i = loss_first_i − loss_second_i``: the mean of ``d`` and ``sd(d)/√n`` with the
    sample standard deviation (n − 1). Negative means ``first`` predicts better.
    """
    differences = [x - y for x, y in zip(log_losses(first, outcomes), log_losses(second, outcomes), strict=True)]
    count = len(differences)
    mean = math.fsum(differences) / count
    if count < 2:
        return Difference(mean, math.inf)
    variance = math.fsum((d - mean) ** 2 for d in differences) / (count - 1)
    return Difference(mean, math.sqrt(variance / count))
