"""Tuning every engine on team and free-for-all games, with ``tune``'s protocol (issue 30).

The protocol is ``tune``'s: the training part is every game before the test part; each
parameter set of the grid is scored on the training part's own last 20% of games (the
validation slice, snapped back to a change of time); each engine's best set by validation
log-loss is then replayed once more to the end and scored on the test part, which no
choice has seen. An axis whose best value sits at an open end grows by one step from the
best set, the other values held (a line search, ``_extended``), at most ``GAME_EXTEND`` times.

Games replay through ``Engine.rate`` one at a time (``games.replay_games``): the vectorised
pass (``vector``) holds 1 v 1 matches only. A replay of 84,487 volleyball games takes
about 5 s, so the grids are coarse and let the extension find the far values: the team
update (``team_delta``: each member by their own RD, the composite's change shared, or
each member's Bayesian share of the team's variance) is crossed with each engine's usual
axes; TrueSkill searches β, its τ (``dynamics``), the draw probability, the idle growth
``sc`` (0 is none) and the initial σ (``initial_rd``, on the ladder's scale). Each
parameter set is one task of the pool, half the tasks on each core.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ratings.backtest.data import Game, split_index
from ratings.backtest.games import pair_count, replay_games_engine
from ratings.backtest.metrics import Metrics, metrics
from ratings.backtest.tune import STEPS, Candidate, Progress, _quiet, _round, grid
from ratings.engines import ENGINES, Params

TEAM_DELTAS = ("own", "shared", "bayes")
GAME_GRIDS: dict[str, dict[str, Sequence[Any]]] = {
    "tgr": {"team_delta": TEAM_DELTAS, "sc": (5.0, 20.0), "initial_rd": (175.0, 350.0), "luck_p": (0.9, 1.0)},
    "glicko1": {"team_delta": TEAM_DELTAS, "c": (5.0, 20.0), "initial_rd": (175.0, 350.0)},
    "glicko2": {"team_delta": TEAM_DELTAS, "period_days": (1.0, 7.0, 30.0)},
    "elo": {"team_delta": TEAM_DELTAS, "k": (16.0, 32.0, 64.0), "sc": (5.0, 20.0)},
    "trueskill": {
        "beta": (87.5, 175.0, 350.0),
        "dynamics": (1.75, 7.0),
        "draw_probability": (0.05, 0.1),
        "sc": (0.0, 10.0),
        "initial_rd": (250.0, 350.0),
    },
}
# TrueSkill's axes grow like the others: β and τ doubled or halved, the draw probability
# halved towards none or doubled up to 0.8 (the engine refuses 1, every game a draw).
GAME_STEPS: dict[str, tuple[float, float, float]] = {
    **STEPS,
    "beta": (2.0, 10.0, 2000.0),
    "dynamics": (2.0, 0.1, 100.0),
    "draw_probability": (2.0, 0.005, 0.8),
}
# At most this many line-search steps past the grid's ends: each costs one replay per open end.
GAME_EXTEND = 6


class GamesTuned(NamedTuple):
    """An engine's best set on games: its validation metrics, its validation and test predictions and types.

    ``probabilities`` and ``types`` are the test part's, one per pair of sides of each game.
    """

    engine: str
    params: dict[str, Any]
    validation: Metrics
    probabilities: list[float]
    validation_probabilities: list[float]
    types: list[str]


_GAMES: Sequence[Game] = ()


def _init(games: Sequence[Game]) -> None:
    global _GAMES
    _GAMES = games


def _score(task: tuple[int, str, dict[str, Any], int, int]) -> tuple[int, Candidate]:
    """One set's metrics on the validation slice ``[validation_start, test_start)``."""
    order, engine, params, test_start, validation_start = task
    scored = replay_games_engine(_GAMES[:test_start], engine, Params(**params), score_from=validation_start)
    predictions = scored.predictions
    return order, Candidate(engine, params, metrics(predictions.probabilities, predictions.outcomes))


def _replay(task: tuple[str, dict[str, Any], int]) -> tuple[list[float], list[str]]:
    """One set's predictions and types from the validation slice to the end."""
    engine, params, validation_start = task
    scored = replay_games_engine(_GAMES, engine, Params(**params), score_from=validation_start)
    return scored.predictions.probabilities, scored.types


def _extended(axes: dict[str, list[Any]], best: dict[str, Any]) -> list[dict[str, Any]]:
    """One step past each open end the best set sits at, the other values held at the best set's.

    A line search along each axis rather than ``tune.extended``'s slab: a games replay costs
    seconds, and crossing a grown end with every value of TrueSkill's four other axes made
    the extensions eight times the grid. ``axes`` grows in place; the team update never does.
    """
    points: list[dict[str, Any]] = []
    for name, axis in axes.items():
        if name not in GAME_STEPS:
            continue
        values = [value for value in axis if value is not None]
        factor, low, high = GAME_STEPS[name]
        added: list[Any] = []
        if best[name] == max(values) and max(values) * factor <= high:
            added.append(_round(max(values) * factor))
        if best[name] == min(values) and min(values) / factor >= low:
            added.append(_round(min(values) / factor))
        points += [{**best, name: value} for value in added]
        axis += added
    return points


def game_engines() -> tuple[str, ...]:
    """Every registered engine with a games grid."""
    return tuple(name for name in ENGINES if name in GAME_GRIDS)


def tune_games(
    games: Sequence[Game],
    test_start: int,
    *,
    engines: Sequence[str] | None = None,
    processes: int = 2,
    progress: Progress = _quiet,
    grids: Mapping[str, Mapping[str, Sequence[Any]]] | None = None,
    extend: int = GAME_EXTEND,
) -> list[GamesTuned]:
    """Each engine's best grid point on the validation slice of ``games[:test_start]``, best first.

    ``engines`` defaults to every registered engine with a grid (``game_engines``).
    Ties keep the earlier point of the grid, so a tuning is the same at every run.
    """
    engines = tuple(engines) if engines is not None else game_engines()
    grids = grids or GAME_GRIDS
    validation_start = split_index(list(games[:test_start]))
    axes = {engine: {name: list(values) for name, values in grids[engine].items()} for engine in engines}
    pending = {engine: grid(engine, grids) for engine in engines}
    best: dict[str, Candidate] = {}
    done = total = 0
    with multiprocessing.Pool(processes, initializer=_init, initargs=(games,)) as pool:
        for _pass in range(extend + 1):
            if not pending:
                break
            tasks = [
                (order, engine, params, test_start, validation_start)
                for order, (engine, params) in enumerate(
                    (engine, params) for engine, sets in pending.items() for params in sets
                )
            ]
            total += len(tasks)
            results: list[tuple[int, Candidate]] = []
            for result in pool.imap_unordered(_score, tasks):
                results.append(result)
                done += 1
                progress(done, total)
            for _order, candidate in sorted(results, key=lambda result: result[0]):
                current = best.get(candidate.engine)
                if current is None or candidate.validation.log_loss < current.validation.log_loss:
                    best[candidate.engine] = candidate
            added = {engine: _extended(axes[engine], best[engine].params) for engine in pending}
            pending = {engine: sets for engine, sets in added.items() if sets}
        winners = sorted(best.values(), key=lambda candidate: candidate.validation.log_loss)
        replays = pool.map(_replay, [(winner.engine, winner.params, validation_start) for winner in winners])
    cut = sum(pair_count(game) for game in games[validation_start:test_start])
    return [
        GamesTuned(
            winner.engine, winner.params, winner.validation, probabilities[cut:], probabilities[:cut], types[cut:]
        )
        for winner, (probabilities, types) in zip(winners, replays, strict=True)
    ]
