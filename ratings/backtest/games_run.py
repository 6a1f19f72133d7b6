"""Backtests of team and free-for-all games as plain dicts, in ``run``'s shape (issue 30).

``games_backtest_report`` replays one engine and the baselines and scores them on the test
part; ``games_tune_report`` tunes every engine on the training part (``games_tune``) and
scores each engine's best set on the test part. Both return what ``run.backtest_report`` and
``run.tune_report`` return (``engine``, ``params``, ``metrics``, ``log_loss_minus``, the
calibrated and tracked figures, ``baselines``, ``split``; ``engines`` rows with each
engine's own validation and test figures after a tuning), plus ``by_type``: the metrics of
each game type present (1 v 1, even teams, uneven teams, free-for-all), for the headline
engine, each engine row and each baseline. A prediction is one pair of sides of a game, so
``n`` counts pairs (a free-for-all of n sides gives n(n−1)/2).

The baselines every games report holds:

- ``elo_k32``: plain Elo K=32 on the team's mean (``games.team_mean_elo``);
- ``trueskill_defaults``: the TrueSkill engine at the package's own constants on the
  ladder's scale, with no idle growth (``Params(sc=0.0)``), when the engine is registered;
- ``always_50``.

With ``packages`` (``--packages``), the published ``trueskill`` and ``openskill`` packages
(``peers``) are tuned on the same training part and join the baselines, so every row holds
its paired log-loss difference against each of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ratings.backtest.data import Game, split_index
from ratings.backtest.games import Scored, metrics_by_type, pair_count, replay_games_engine, team_mean_elo
from ratings.backtest.games_tune import game_engines, tune_games
from ratings.backtest.metrics import by_band, metrics, reliability
from ratings.backtest.peers import tune_peers
from ratings.backtest.replay import Predictions, half_baseline
from ratings.backtest.run import HALF_NAME, _calibrated, _predictor, headline, tuned_row
from ratings.backtest.tune import Progress, _quiet
from ratings.engines import ENGINES, Params

ELO_NAME = "elo_k32"
TRUESKILL_NAME = "trueskill_defaults"
TRUESKILL_DEFAULTS = Params(sc=0.0)  # the package's constants on the ladder's scale, no idle growth


def games_split_summary(games: Sequence[Game], test_start: int) -> dict[str, Any]:
    """The split in games (``matches`` keeps ``run.split_summary``'s key) and in scored pairs."""
    return {
        "matches": len(games),
        "train": test_start,
        "test": len(games) - test_start,
        "test_from_utc_seconds": games[test_start].at,
        "test_pairs": sum(pair_count(game) for game in games[test_start:]),
    }


def _baselines(games: Sequence[Game], test_start: int) -> tuple[dict[str, Predictions], dict[str, Any]]:
    """The baselines' test predictions, and their report rows (metrics, params, ``by_type``)."""
    elo = team_mean_elo(games, score_from=test_start)
    scored: dict[str, Scored] = {ELO_NAME: elo}
    if "trueskill" in ENGINES:
        scored[TRUESKILL_NAME] = replay_games_engine(games, "trueskill", TRUESKILL_DEFAULTS, score_from=test_start)
    predictions = {name: s.predictions for name, s in scored.items()}
    predictions[HALF_NAME] = half_baseline(elo.predictions.outcomes, elo.predictions.favourites)
    scored[HALF_NAME] = Scored(predictions[HALF_NAME], elo.types)
    rows: dict[str, Any] = {}
    for name, s in scored.items():
        p = s.predictions
        rows[name] = {
            "metrics": metrics(p.probabilities, p.outcomes).as_dict(),
            "by_type": metrics_by_type(p.probabilities, p.outcomes, s.types),
        }
    rows[ELO_NAME]["params"] = {"k": 32.0, "team": "mean"}
    if TRUESKILL_NAME in rows:
        rows[TRUESKILL_NAME]["params"] = dataclasses.asdict(TRUESKILL_DEFAULTS)
    return predictions, rows


def _validation(games: Sequence[Game], test_start: int) -> tuple[int, int, list[float]]:
    """Where the validation slice starts, its number of predictions and their outcomes (by ``team_mean_elo``)."""
    start = split_index(list(games[:test_start]))
    outcomes = team_mean_elo(games[:test_start], score_from=start).predictions.outcomes
    return start, len(outcomes), outcomes


def _add_peers(
    games: Sequence[Game],
    test_start: int,
    baselines: dict[str, Predictions],
    rows: dict[str, Any],
    types: Sequence[str],
    progress: Progress,
) -> None:
    for peer in tune_peers(games, test_start, progress=progress):
        p = peer.predictions
        baselines[peer.name] = p
        rows[peer.name] = {
            "metrics": metrics(p.probabilities, p.outcomes).as_dict(),
            "by_type": metrics_by_type(p.probabilities, p.outcomes, types),
            "params": peer.params,
            "validation": peer.validation.as_dict(),
        }


def games_backtest_report(
    games: Sequence[Game],
    engine: str,
    params: Params,
    test_start: int,
    *,
    symmetric: bool = True,
    packages: bool = False,
    progress: Progress = _quiet,
) -> dict[str, Any]:
    """``engine`` under ``params`` and the baselines, scored on the pairs of ``games[test_start:]``.

    ``symmetric``: the sides have no order (a ladder's, or a file whose a and b are shuffled),
    so the calibration fits its slope only.
    """
    validation_start, cut, validation_outcomes = _validation(games, test_start)
    replayed = replay_games_engine(games, engine, params, score_from=validation_start)
    whole = replayed.predictions
    predictions = Predictions(whole.probabilities[cut:], whole.outcomes[cut:], whole.favourites[cut:])
    types = replayed.types[cut:]
    baselines, baseline_rows = _baselines(games, test_start)
    if packages:
        _add_peers(games, test_start, baselines, baseline_rows, types, progress)
    probabilities, outcomes = predictions.probabilities, predictions.outcomes
    return {
        "engine": engine,
        "params": dataclasses.asdict(params),
        "edge": 0.0,
        **_predictor(predictions, baselines),
        **_calibrated(whole.probabilities[:cut], validation_outcomes, predictions, baselines, symmetric),
        "by_type": metrics_by_type(probabilities, outcomes, types),
        "bands": {name: m.as_dict() for name, m in by_band(probabilities, outcomes, predictions.favourites).items()},
        "reliability": [row._asdict() for row in reliability(probabilities, outcomes)],
        "baselines": baseline_rows,
        "split": games_split_summary(games, test_start),
    }


def games_tune_report(
    games: Sequence[Game],
    test_start: int,
    *,
    engines: Sequence[str] | None = None,
    progress: Progress = _quiet,
    symmetric: bool = True,
    packages: bool = False,
) -> dict[str, Any]:
    """Every engine tuned on the training part of ``games``; the headline is the best on the validation slice.

    ``engines`` defaults to every registered engine with a grid (``games_tune.game_engines``).
    """
    tuned = tune_games(games, test_start, engines=engines or game_engines(), progress=progress)
    baselines, baseline_rows = _baselines(games, test_start)
    outcomes = baselines[ELO_NAME].outcomes
    types = tuned[0].types
    if packages:
        _add_peers(games, test_start, baselines, baseline_rows, types, progress)
    _start, _cut, validation_outcomes = _validation(games, test_start)
    rows = [
        {
            **tuned_row(result, 0.0, outcomes, baselines, validation_outcomes, symmetric),
            "by_type": metrics_by_type(result.probabilities, outcomes, result.types),
        }
        for result in tuned
    ]
    return {
        **headline(rows[0]),
        "by_type": rows[0]["by_type"],
        "engines": rows,
        "baselines": baseline_rows,
        "split": games_split_summary(games, test_start),
    }
