"""Recalibrating as results come in: each prediction mapped through the latest results' calibration.

A calibration fitted once (``calibration.fit`` on the validation slice) goes stale: on the
shared tennis file the engines grow more overconfident in the later years (the slope that
fits 2004–2012 is 0.87, the one that fits the last 5,000 results of 2024 about 0.82), and
football's home edge shrinks (its intercept falls from 0.40 to 0.30). ``tracked`` refits the
same two numbers every ``every`` results on the ``window`` predictions made just before,
whose outcomes were known by then, and maps the next ones through it: nothing after a
match is used for it. ``choose_window`` picks the window on the validation slice alone, by
the log-loss of tracking its second half from its first.

Each refit is ``calibration.fit_arrays`` on the window's logits, so that a few hundred
refits over tens of thousands of predictions take a second.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ratings.backtest.calibration import IDENTITY, Calibration, fit_arrays, logits
from ratings.backtest.metrics import log_loss

WINDOWS = (2_000, 5_000, 10_000, 20_000)
EVERY = 250


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
    x = np.concatenate([logits(history), logits(probabilities)])
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
