"""Recalibrating as results come in (``ratings.backtest.tracking``, issue 17's calibration target)."""

from __future__ import annotations

import math
import random

import pytest

from ratings.backtest.calibration import fit
from ratings.backtest.metrics import ece, log_loss
from ratings.backtest.tracking import WINDOWS, choose_window, tracked
from tests.ratings.test_backtest_calibration import sample


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def drifting(n: int, start: float, end: float, seed: int = 11) -> tuple[list[float], list[float]]:
    """Predictions whose true slope moves from ``start`` to ``end`` over the ``n`` results, as a
    community whose ratings grow more (or less) sure of themselves than the results bear out."""
    rng = random.Random(seed)
    probabilities, outcomes = [], []
    for i in range(n):
        x = rng.gauss(0.0, 1.5)
        slope = start + (end - start) * i / n
        probabilities.append(sigmoid(x))
        outcomes.append(1.0 if rng.random() < sigmoid(slope * x) else 0.0)
    return probabilities, outcomes


def test_a_prediction_is_mapped_by_earlier_results_only():
    probabilities, outcomes = drifting(3_000, 1.0, 0.7)
    history, later = (probabilities[:1_000], outcomes[:1_000]), (probabilities[1_000:], outcomes[1_000:])
    mapped, _ = tracked(*history, *later, window=500, every=100)

    changed = list(later[1])
    for i in range(1_300, 2_000):  # every outcome from the 1,300th later result on turns around
        changed[i] = 1.0 - changed[i]
    remapped, _ = tracked(*history, later[0], changed, window=500, every=100)

    assert remapped[:1_301] == mapped[:1_301]  # up to the first refit that could see a changed outcome
    assert remapped[1_400:] != mapped[1_400:]


def test_each_block_uses_the_calibration_of_the_window_before_it():
    probabilities, outcomes = drifting(2_000, 1.0, 0.6, seed=5)
    mapped, last = tracked(probabilities[:1_000], outcomes[:1_000], probabilities[1_000:], outcomes[1_000:], window=400)

    by_hand = fit(probabilities[1_000 - 400 + 750 : 1_750], outcomes[1_000 - 400 + 750 : 1_750])
    assert mapped[750] == pytest.approx(by_hand.apply(probabilities[1_750]), abs=1e-12)
    assert last.slope == pytest.approx(by_hand.slope, abs=1e-9)


def test_tracking_follows_a_drift_a_calibration_fitted_once_misses():
    probabilities, outcomes = drifting(40_000, 1.0, 0.6)
    history, test = slice(0, 20_000), slice(20_000, None)
    once = fit(probabilities[history][-5_000:], outcomes[history][-5_000:])
    fixed = once.apply_all(probabilities[test])

    followed, last = tracked(
        probabilities[history], outcomes[history], probabilities[test], outcomes[test], window=5_000
    )

    assert last.slope == pytest.approx(0.62, abs=0.06)  # the end's slope, not the start's
    assert log_loss(followed, outcomes[test]) < log_loss(fixed, outcomes[test])
    assert ece(followed, outcomes[test]) < ece(fixed, outcomes[test])


def test_the_window_is_chosen_on_the_validation_slice():
    steady = sample(0.8, 0.0, n=12_000, seed=9)
    assert choose_window(*steady) in WINDOWS and choose_window(*steady) <= 6_000

    fast = drifting(12_000, 1.3, 0.5)
    assert choose_window(*fast, intercept=False) == WINDOWS[0]  # a fast drift: the shortest memory
    assert choose_window([0.6], [1.0]) == WINDOWS[0]  # too few to choose: the shortest


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="outcome"):
        tracked([0.5], [], [0.5], [1.0], window=10)
    with pytest.raises(ValueError, match="at least 1"):
        tracked([0.5], [1.0], [0.5], [1.0], window=0)
