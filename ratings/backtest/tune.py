"""Choosing each engine's parameters from the past only, then scoring them once on the future.

The protocol (issue 17; ``../shared/data/README.md``): the training part is every match
before the test part. Each parameter set of a small grid is replayed through the training
part and scored on its own last 20% (the validation slice, snapped back to a change of
time like the test cut). The best set of each engine, by validation log-loss, is then
replayed through training and test and scored on the test part, which no choice has seen.
The recommended engine is the one with the best *validation* log-loss, not the best test
score: choosing by test score would be peeking.

The grids are small on purpose (a first version, one replay per parameter set, both cores
through a process pool): 84 replays.
"""

from __future__ import annotations

import itertools
import multiprocessing
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ratings.backtest.data import Match, split_index
from ratings.backtest.metrics import Metrics, metrics
from ratings.backtest.replay import replay_engine
from ratings.engines import ENGINES, Params

# Every engine's grid, as Params fields. SC is TGR's RD growth per √day (the seed's 20 was
# chosen for a daily Pokémon ladder; the issue's fit on tennis was about 2.5); Glicko-1's c
# is per rating period of 1 day; Glicko-2's RD growth is set by σ (0.06 for a new player)
# per period, so a longer period grows RD more slowly. Elo's k moves the rating; its RD
# (grown by SC) only attenuates the site's win probability.
GRIDS: dict[str, dict[str, Sequence[float]]] = {
    "tgr": {"sc": (1.25, 2.5, 5.0, 10.0, 20.0), "luck_p": (0.9, 1.0), "initial_rd": (150.0, 250.0, 350.0)},
    "glicko1": {"c": (1.25, 2.5, 5.0, 10.0, 20.0, 34.6), "initial_rd": (150.0, 250.0, 350.0)},
    "glicko2": {"tau": (0.3, 0.6, 1.0), "period_days": (1.0, 7.0, 30.0, 90.0), "initial_rd": (250.0, 350.0)},
    "elo": {"k": (16.0, 24.0, 32.0, 48.0), "sc": (2.5, 5.0, 20.0)},
}

Progress = Callable[[int, int], None]


class Candidate(NamedTuple):
    """One engine and parameter set, with its validation metrics."""

    engine: str
    params: dict[str, Any]
    validation: Metrics


class Tuned(NamedTuple):
    """An engine's best parameter set: its validation metrics and, once, its test predictions."""

    engine: str
    params: dict[str, Any]
    validation: Metrics
    probabilities: list[float]


def grid(engine: str) -> list[dict[str, Any]]:
    """Every parameter set of ``engine``'s grid, as keyword arguments of ``Params``."""
    fields = GRIDS[engine]
    return [dict(zip(fields, values, strict=True)) for values in itertools.product(*fields.values())]


_MATCHES: Sequence[Match] = ()


def _init(matches: Sequence[Match]) -> None:
    global _MATCHES
    _MATCHES = matches


def _score(task: tuple[str, dict[str, Any], int, int]) -> Candidate:
    """Replay ``_MATCHES[:end]`` under one parameter set and score it from ``score_from``."""
    engine, params, end, score_from = task
    predictions = replay_engine(_MATCHES[:end], engine, Params(**params), score_from=score_from)
    return Candidate(engine, params, metrics(predictions.probabilities, predictions.outcomes))


def _test(task: tuple[str, dict[str, Any], int, int]) -> list[float]:
    engine, params, _end, score_from = task
    return replay_engine(_MATCHES, engine, Params(**params), score_from=score_from).probabilities


def _quiet(done: int, total: int) -> None:
    return None


def stderr_progress(done: int, total: int) -> None:
    """A line on stderr at every tenth of the grid: ``tune: 42/84 parameter sets``."""
    if done == total or done % max(1, total // 10) == 0:
        sys.stderr.write(f"tune: {done}/{total} parameter sets\n")
        sys.stderr.flush()


def tune(
    matches: Sequence[Match],
    test_start: int,
    *,
    engines: Sequence[str] = tuple(ENGINES),
    processes: int = 2,
    progress: Progress = _quiet,
) -> list[Tuned]:
    """Each engine's best grid point on the validation slice, with its test predictions.

    ``matches[:test_start]`` is the training part; its last 20% (snapped back to a change
    of time) scores the grid. The result is sorted by validation log-loss, best first.
    """
    validation_start = split_index(list(matches[:test_start]))
    tasks: list[tuple[str, dict[str, Any], int, int]] = [
        (engine, params, test_start, validation_start) for engine in engines for params in grid(engine)
    ]
    best: dict[str, Candidate] = {}
    with multiprocessing.Pool(processes, initializer=_init, initargs=(matches,)) as pool:
        for done, candidate in enumerate(pool.imap_unordered(_score, tasks), start=1):
            progress(done, len(tasks))
            current = best.get(candidate.engine)
            if current is None or candidate.validation.log_loss < current.validation.log_loss:
                best[candidate.engine] = candidate
        winners = sorted(best.values(), key=lambda candidate: candidate.validation.log_loss)
        tests: list[Any] = pool.map(
            _test, [(winner.engine, winner.params, len(matches), test_start) for winner in winners]
        )
    return [
        Tuned(winner.engine, winner.params, winner.validation, probabilities)
        for winner, probabilities in zip(winners, tests, strict=True)
    ]
