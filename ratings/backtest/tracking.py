"""Recalibrating as results come in: each prediction mapped through the latest results' calibration.

A calibration fitted once (``calibration.fit`` on the validation slice) goes stale: on the
shared tennis file the engines grow more overconfident in the later years (the slope that
fits 2004–2012 is 0.87, the one that fits the last 5,000 results of 2024 about 0.82), and
football's home edge shrinks (its intercept falls from 0.40 to 0.30). ``tracked`` refits the
same two numbers every ``every`` results on the ``window`` predictions made just before,
whose outcomes were known by then, and maps the next ones through it: nothing after a
match is used for it. ``choose_window`` picks the window on the validation slice alone, by
the log-loss of tracking its second half from its first.

The fit is ``calibration.fit``'s maximum likelihood written over NumPy arrays, so that a
few hundred refits over tens of thousands of predictions take a second, not a minute;
``tests/ratings/test_backtest_tracking.py`` checks the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ratings.backtest.calibration import EDGE, IDENTITY, ITERATIONS, TOLERANCE, Calibration
from ratings.backtest.metrics import log_loss

WINDOWS = (2_000, 5_000, 10_000, 20_000)
EVERY = 250

Floats = npt.NDArray[np.float64]


def _logits(probabilities: Sequence[float]) -> Floats:
    p = np.clip(np.asarray(probabilities, dtype=np.float64), EDGE, 1.0 - EDGE)
    return np.log(p / (1.0 - p))


def _loss(x: Floats, y: Floats, a: float, b: float) -> float:
    z = a * x + b
    # −[y·ln σ(z) + (1 − y)·ln σ(−z)], finite for large |z|: softplus(−z)·y + softplus(z)·(1 − y)
    return float(np.sum(y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z)))


def fit_arrays(x: Floats, y: Floats, *, intercept: bool = True) -> Calibration:
    """``calibration.fit`` of the logits ``x`` against the outcomes ``y``: Newton's steps from the
    identity, a step that would not lower the log-loss halved."""
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


def tracked(
    history: Sequence[float],
    history_outcomes: Sequence[float],
    probabilities: Sequence[float],
    outcomes: Sequence[float],
    *,
    window: int,
    every: int = EVERY,
    intercept: bool = True,
) -> tuple[list[float], Calibration]:
    """Each of ``probabilities`` mapped through the calibration of the ``window`` predictions before
    it (the end of ``history``, then the earlier ``probabilities``), refitted every ``every``;
    and the last calibration fitted. ``outcomes[i]`` is used only for predictions after the i-th."""
    if len(history) != len(history_outcomes) or len(probabilities) != len(outcomes):
        raise ValueError("every prediction needs its outcome")
    if window < 1 or every < 1:
        raise ValueError("window and every must be at least 1")
    x = np.concatenate([_logits(history), _logits(probabilities)])
    y = np.asarray([*history_outcomes, *outcomes], dtype=np.float64)
    start = len(history)
    mapped = np.empty(len(probabilities))
    calibration = IDENTITY
    for begin in range(0, len(probabilities), every):
        at = start + begin
        calibration = fit_arrays(x[max(0, at - window) : at], y[max(0, at - window) : at], intercept=intercept)
        chunk = x[at : at + every]
        mapped[begin : begin + len(chunk)] = 1.0 / (1.0 + np.exp(-(calibration.slope * chunk + calibration.intercept)))
    return mapped.tolist(), calibration


def choose_window(probabilities: Sequence[float], outcomes: Sequence[float], *, intercept: bool = True) -> int:
    """The window of ``WINDOWS`` (at most half of the predictions) whose tracking of their second half,
    from the first, has the lowest log-loss; ``probabilities`` are the validation slice's."""
    half = len(probabilities) // 2
    if half < 1:
        return WINDOWS[0]
    candidates = [window for window in WINDOWS if window <= half] or [max(half, 1)]
    later = outcomes[half:]

    def loss(window: int) -> float:
        mapped, _ = tracked(
            probabilities[:half], outcomes[:half], probabilities[half:], later, window=window, intercept=intercept
        )
        return log_loss(mapped, later)

    return min(candidates, key=loss)
