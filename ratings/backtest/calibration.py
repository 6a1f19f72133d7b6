"""Recalibrating an engine's predictions on the past: ``p' = σ(slope·logit p + intercept)``.

Every tuned engine came out overconfident on the shared data (tennis: 93% predicted, 87%
observed at the top; the fitted slope is 0.83–0.87): the rating *order* is right, the
*spread* of the probabilities is too wide. Platt scaling (Platt 1999) fits two numbers by
maximum likelihood on predictions the engine made before each match, then maps every later
prediction through them. It never changes a rating, only the probability read from two
ratings, so the order of players and every replay stay as they are.

The two numbers are fitted on the validation slice of the training part (the tuner's own
out-of-sample predictions, ``tune.Tuned.validation_probabilities``), never on the test
part. ``slope`` below 1 shrinks overconfident predictions towards ½; ``intercept`` is the
first-named side's edge in log-odds: a football file names the home team first (0.40, about
70 points of home advantage), while a ladder's sides carry no such order and get ≈ 0. A
draw is half a win and half a loss, as in ``metrics``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

EDGE = 1e-9  # predictions are clipped to [1e-9, 1 − 1e-9] before their logit is taken
ITERATIONS = 50
TOLERANCE = 1e-12


class Calibration(NamedTuple):
    """``p' = σ(slope·logit p + intercept)``; the identity is ``Calibration(1.0, 0.0)``."""

    slope: float
    intercept: float

    def apply(self, probability: float) -> float:
        return _sigmoid(self.slope * _logit(probability) + self.intercept)

    def apply_all(self, probabilities: Sequence[float]) -> list[float]:
        return [self.apply(p) for p in probabilities]


IDENTITY = Calibration(1.0, 0.0)


def _logit(p: float) -> float:
    p = min(max(p, EDGE), 1.0 - EDGE)
    return math.log(p / (1.0 - p))


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def fit(probabilities: Sequence[float], outcomes: Sequence[float], *, intercept: bool = True) -> Calibration:
    """The maximum-likelihood ``Calibration`` of ``probabilities`` against ``outcomes`` (Newton's method).

    The log-loss is convex in (slope, intercept), so Newton's steps from the identity reach
    its minimum; a step that would not lower the loss is halved. ``intercept=False`` fits
    the slope alone (for sides with no order). Fewer than two distinct outcomes, or no
    spread in the predictions, leave nothing to fit: the identity comes back.
    """
    if len(probabilities) != len(outcomes):
        raise ValueError(f"outcomes must match probabilities: {len(probabilities)} predictions, got {len(outcomes)}")
    xs = [_logit(p) for p in probabilities]
    if len(set(outcomes)) < 2 or max(xs, default=0.0) - min(xs, default=0.0) < 1e-12:
        return IDENTITY
    a, b = 1.0, 0.0
    loss = _loss(xs, outcomes, a, b)
    for _ in range(ITERATIONS):
        ga = gb = haa = hab = hbb = 0.0
        for x, y in zip(xs, outcomes, strict=True):
            q = _sigmoid(a * x + b)
            r = q - y
            w = q * (1.0 - q)
            ga += r * x
            gb += r
            haa += w * x * x
            hab += w * x
            hbb += w
        if intercept:
            determinant = haa * hbb - hab * hab
            if determinant <= 0:
                break
            da = (hbb * ga - hab * gb) / determinant
            db = (haa * gb - hab * ga) / determinant
        else:
            if haa <= 0:
                break
            da, db = ga / haa, 0.0
        step = 1.0
        while step > 1e-6:
            trial = _loss(xs, outcomes, a - step * da, b - step * db)
            if trial <= loss:
                break
            step /= 2
        else:
            break
        a, b, loss = a - step * da, b - step * db, trial
        if max(abs(step * da), abs(step * db)) < TOLERANCE:
            break
    return Calibration(a, b)


def _loss(xs: Sequence[float], outcomes: Sequence[float], a: float, b: float) -> float:
    total = 0.0
    for x, y in zip(xs, outcomes, strict=True):
        z = a * x + b
        # −[y·ln σ(z) + (1 − y)·ln σ(−z)], written to stay finite for large |z|
        total += y * _softplus(-z) + (1.0 - y) * _softplus(z)
    return total


def _softplus(z: float) -> float:
    return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))
