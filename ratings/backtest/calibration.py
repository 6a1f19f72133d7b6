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

import numpy as np
import numpy.typing as npt

EDGE = 1e-9  # predictions are clipped to [1e-9, 1 − 1e-9] before their logit is taken
ITERATIONS = 50
TOLERANCE = 1e-12

Floats = npt.NDArray[np.float64]


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
    """The maximum-likelihood ``Calibration`` of ``probabilities`` against ``outcomes`` (``fit_arrays``).

    Fewer than two distinct outcomes, or no spread in the predictions, leave nothing to fit:
    the identity comes back.
    """
    if len(probabilities) != len(outcomes):
        raise ValueError(f"outcomes must match probabilities: {len(probabilities)} predictions, got {len(outcomes)}")
    return fit_arrays(logits(probabilities), np.asarray(outcomes, dtype=np.float64), intercept=intercept)


def logits(probabilities: Sequence[float]) -> Floats:
    """Each prediction's log-odds, clipped to ``[EDGE, 1 − EDGE]`` first."""
    p = np.clip(np.asarray(probabilities, dtype=np.float64), EDGE, 1.0 - EDGE)
    return np.log(p / (1.0 - p))


def _loss(x: Floats, y: Floats, a: float, b: float) -> float:
    z = a * x + b
    # −[y·ln σ(z) + (1 − y)·ln σ(−z)], finite for large |z|: softplus(−z)·y + softplus(z)·(1 − y)
    return float(np.sum(y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z)))


def fit_arrays(x: Floats, y: Floats, *, intercept: bool = True) -> Calibration:
    """The maximum-likelihood calibration of the logits ``x`` against the outcomes ``y``.

    The log-loss is convex in (slope, intercept), so Newton's steps from the identity reach
    its minimum; a step that would not lower the loss is halved. ``intercept=False`` fits
    the slope alone (for sides with no order).
    """
    if len(np.unique(y)) < 2 or len(x) == 0 or float(np.ptp(x)) < 1e-12:
        return IDENTITY
    a, b = 1.0, 0.0
    loss = _loss(x, y, a, b)
    for _ in range(ITERATIONS):
        q = 1.0 / (1.0 + np.exp(-(a * x + b)))
        r, w = q - y, q * (1.0 - q)
        ga, gb = float(r @ x), float(r.sum())
        haa, hab, hbb = float(w @ (x * x)), float(w @ x), float(w.sum())
        if intercept:
            determinant = haa * hbb - hab * hab
            if determinant <= 0:
                break
            da, db = (hbb * ga - hab * gb) / determinant, (haa * gb - hab * ga) / determinant
        else:
            if haa <= 0:
                break
            da, db = ga / haa, 0.0
        step = 1.0
        while step > 1e-6:
            trial = _loss(x, y, a - step * da, b - step * db)
            if trial <= loss:
                break
            step /= 2
        else:
            break
        a, b, loss = a - step * da, b - step * db, trial
        if max(abs(step * da), abs(step * db)) < TOLERANCE:
            break
    return Calibration(a, b)
