"""One backtest as a plain dict: the code path the CLI prints (and a future ladder service stores).

``backtest_report`` replays one engine and the baselines and scores them on the test part;
``tune_report`` tunes every engine on the training part (``tune.tune``) and scores each
engine's best set on the test part. Both return JSON-ready dicts whose ``engine``,
``params`` (every ``Params`` field, so ``Params(**params)`` rebuilds it) and ``metrics``
are the headline, and which hold the evidence next to it. ``edge`` is the first-named side's edge in rating
points (``replay.replay``): tuned for a results file, always 0 for a ladder.

Each engine is also scored *calibrated*: its predictions mapped through the
``calibration.Calibration`` fitted on the validation slice of the training part (the
engine's own predictions there, made before each match), under ``calibration`` and
``calibrated``; and *tracked*: recalibrated as the test part's results come in, each
prediction mapped through the calibration of the latest results before it
(``tracking.tracked``, its window chosen on the validation slice), under ``tracking`` and
``tracked``. The headline ``metrics`` stay the engine's own, which ``--engine`` and
``--params`` reproduce.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ratings.backtest import tracking
from ratings.backtest.calibration import fit
from ratings.backtest.data import Match, split_index
from ratings.backtest.metrics import by_band, metrics, paired_difference, reliability
from ratings.backtest.package import glicko2_package
from ratings.backtest.replay import ELO_BASELINE, Predictions, elo_baseline, half_baseline, replay_engine
from ratings.backtest.tune import TUNED, Progress, _quiet, tune
from ratings.engines import Params

ELO_NAME = "elo_k32"
PACKAGE_NAME = "glicko2_package"
HALF_NAME = "always_50"


def split_summary(matches: Sequence[Match], test_start: int) -> dict[str, Any]:
    return {
        "matches": len(matches),
        "train": test_start,
        "test": len(matches) - test_start,
        "test_from_utc_seconds": matches[test_start].at,
    }


def _predictor(predictions: Predictions, baselines: dict[str, Predictions]) -> dict[str, Any]:
    """Metrics of one predictor and its paired log-loss difference against each baseline."""
    probabilities, outcomes = predictions.probabilities, predictions.outcomes
    versus = {}
    for name, baseline in baselines.items():
        difference = paired_difference(probabilities, baseline.probabilities, outcomes)
        versus[name] = {"mean": difference.mean, "se": difference.se, "significant": difference.significant}
    return {"metrics": metrics(probabilities, outcomes).as_dict(), "log_loss_minus": versus}


def _baselines(matches: Sequence[Match], test_start: int) -> dict[str, Predictions]:
    """Plain Elo K=32, the ``glicko2`` package and always 50% on the test part (50%'s favourites are Elo's)."""
    elo = elo_baseline(matches, score_from=test_start)
    return {
        ELO_NAME: elo,
        PACKAGE_NAME: glicko2_package(matches, score_from=test_start),
        HALF_NAME: half_baseline(elo.outcomes, elo.favourites),
    }


def _calibrated(
    validation: Sequence[float],
    validation_outcomes: Sequence[float],
    test: Predictions,
    baselines: dict[str, Predictions],
    symmetric: bool,
) -> dict[str, Any]:
    """The calibration fitted on the validation predictions and the test part scored through it.

    ``symmetric``: the sides have no order (a ladder's), so only the slope is fitted.
    """
    calibration = fit(validation, validation_outcomes, intercept=not symmetric)
    mapped = Predictions(calibration.apply_all(test.probabilities), test.outcomes, test.favourites)
    window = tracking.choose_window(validation, validation_outcomes, intercept=not symmetric)
    followed, last = tracking.tracked(
        validation, validation_outcomes, test.probabilities, test.outcomes, window=window, intercept=not symmetric
    )
    return {
        "calibration": calibration._asdict(),
        "calibrated": _predictor(mapped, baselines),
        "tracking": {"window": window, "every": tracking.EVERY, "last": last._asdict()},
        "tracked": _predictor(Predictions(followed, test.outcomes, test.favourites), baselines),
    }


def _validation_outcomes(matches: Sequence[Match], test_start: int) -> tuple[int, list[float]]:
    """Where the validation slice starts (``tune``'s own cut) and its scores."""
    start = split_index(list(matches[:test_start]))
    return start, [match.score_a for match in matches[start:test_start]]


def _baseline_rows(baselines: dict[str, Predictions]) -> dict[str, Any]:
    rows: dict[str, Any] = {
        name: {"metrics": metrics(b.probabilities, b.outcomes).as_dict()} for name, b in baselines.items()
    }
    rows[ELO_NAME]["params"] = dataclasses.asdict(ELO_BASELINE)
    return rows


def backtest_report(
    matches: Sequence[Match],
    engine: str,
    params: Params,
    test_start: int,
    *,
    symmetric: bool = False,
    edge: float = 0.0,
) -> dict[str, Any]:
    """``engine`` under ``params`` and the baselines, scored on ``matches[test_start:]``.

    ``edge``: the first-named side's edge in rating points (``replay.replay``), as tuned.
    """
    if symmetric and edge:
        raise ValueError("a ladder's sides have no order: its backtest has no edge")
    validation_start, validation_outcomes = _validation_outcomes(matches, test_start)
    replayed = replay_engine(matches, engine, params, score_from=validation_start, edge=edge)
    cut = test_start - validation_start
    predictions = Predictions(replayed.probabilities[cut:], replayed.outcomes[cut:], replayed.favourites[cut:])
    baselines = _baselines(matches, test_start)
    probabilities, outcomes = predictions.probabilities, predictions.outcomes
    return {
        "engine": engine,
        "params": dataclasses.asdict(params),
        "edge": edge,
        **_predictor(predictions, baselines),
        **_calibrated(replayed.probabilities[:cut], validation_outcomes, predictions, baselines, symmetric),
        "bands": {name: m.as_dict() for name, m in by_band(probabilities, outcomes, predictions.favourites).items()},
        "reliability": [row._asdict() for row in reliability(probabilities, outcomes)],
        "baselines": _baseline_rows(baselines),
        "split": split_summary(matches, test_start),
    }


# The keys of a tune report's headline, taken from its best engine's row.
HEADLINE = ("engine", "params", "edge", "metrics", "log_loss_minus", "calibration", "calibrated", "tracking", "tracked")


def headline(best: dict[str, Any]) -> dict[str, Any]:
    """The report's headline: the best row's engine, settings and figures (``HEADLINE``)."""
    return {name: best[name] for name in HEADLINE}


def tuned_row(
    result: Any,
    edge: float,
    outcomes: Sequence[float],
    baselines: dict[str, Predictions],
    validation_outcomes: Sequence[float],
    symmetric: bool,
) -> dict[str, Any]:
    """One tuned engine's row: its settings, validation figures, and test figures against each baseline.

    ``result`` is a ``tune.Tuned`` or a ``games_tune.GamesTuned`` (engine, params, validation,
    probabilities and validation probabilities).
    """
    predictions = Predictions(result.probabilities, list(outcomes), [])
    return {
        "engine": result.engine,
        "params": dataclasses.asdict(Params(**result.params)),
        "tuned": result.params,
        "edge": edge,
        "validation": result.validation.as_dict(),
        **_predictor(predictions, baselines),
        **_calibrated(result.validation_probabilities, validation_outcomes, predictions, baselines, symmetric),
    }


def tune_report(
    matches: Sequence[Match],
    test_start: int,
    *,
    engines: Sequence[str] = TUNED,
    progress: Progress = _quiet,
    symmetric: bool = False,
) -> dict[str, Any]:
    """Every engine tuned on the training part; the headline is the best on the validation slice.

    Unless ``symmetric`` (a ladder's sides have no order), each engine's edge of the
    first-named side is tuned too (``tune.tune``'s ``edge``).
    """
    tuned = tune(matches, test_start, engines=engines, progress=progress, edge=not symmetric)
    baselines = _baselines(matches, test_start)
    outcomes = baselines[ELO_NAME].outcomes
    _start, validation_outcomes = _validation_outcomes(matches, test_start)
    rows = [tuned_row(result, result.edge, outcomes, baselines, validation_outcomes, symmetric) for result in tuned]
    return {
        **headline(rows[0]),
        "engines": rows,
        "baselines": _baseline_rows(baselines),
        "split": split_summary(matches, test_start),
    }
