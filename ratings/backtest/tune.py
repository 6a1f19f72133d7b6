"""Choosing each engine's parameters from the past only, then scoring them once on the future.

The protocol (issue 17; ``../shared/data/README.md``): the training part is every match
before the test part. Each parameter set of the grid is scored on the training part's own
last 20% (the validation slice, snapped back to a change of time like the test cut). The
best set of each engine, by validation log-loss, is then scored on the test part, which
no choice has seen.
The recommended engine is the one with the best *validation* log-loss, not the best test
score: choosing by test score would be peeking.

Every engine runs its whole grid in one vectorised pass over every match
(``vector.replay_sets``), half the grid on each core: a set's validation and test
predictions come from the same pass (a replay never looks ahead, so the predictions of the
validation slice do not depend on what follows it), and only the validation ones choose.
Glicko-2's vectorised predictions agree with its engine to about 1e-6 only
(``vector.EXACT``), so its chosen set is replayed once more through ``Engine.rate`` for the
test figures. ``vectorised=False`` replays every set through ``Engine.rate``, one a task.

The grids are geometric and wide (each step doubles a value or so), because a community's
best values are not known in advance. When an engine's best value sits at the open end of
an axis, the axis is extended by one more step and only the new points are replayed, at
most ``EXTEND`` times: the grid follows the data rather than our guess of it.

With ``edge`` (a results file, whose first-named side may be a home team), each engine's
edge of the first-named side is searched after its grid (``_Search.edges``) and kept only
when it beats no edge on the validation slice by more than twice the paired standard error.
"""

from __future__ import annotations

import itertools
import multiprocessing
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ratings.backtest import vector
from ratings.backtest.data import Match, split_index
from ratings.backtest.metrics import Difference, Metrics, metrics, paired_difference
from ratings.backtest.replay import replay_engine
from ratings.engines import ENGINES, Params

# Every engine's grid, as Params fields. SC is TGR's RD growth per √day (the seed's 20 was
# chosen for a daily Pokémon ladder); Glicko-1's c is per rating period, which the engine
# spreads over the idle time (RD² grows by c²/period a day), so its period adds nothing a
# wider c does not; Glicko-2's RD growth is set by σ (0.06 for a new player) per period, so
# a longer period grows RD more slowly. Elo's k moves the rating; its RD (grown by SC)
# only attenuates the site's win probability. ``rd_min`` is the RD floor (None: none; Lichess
# uses 45, Showdown 25); TGR's luck P below 0.9 never helped on either dataset.
GRIDS: dict[str, dict[str, Sequence[float | None]]] = {
    "tgr": {
        "sc": (0.625, 1.25, 2.5, 5.0, 10.0, 20.0),
        "luck_p": (0.9, 1.0),
        "initial_rd": (125.0, 175.0, 250.0, 350.0),
        "rd_min": (None, 25.0, 50.0),
    },
    "glicko1": {
        "c": (0.625, 1.25, 2.5, 5.0, 10.0, 20.0, 40.0),
        "initial_rd": (125.0, 175.0, 250.0, 350.0),
        "rd_min": (None, 25.0, 50.0),
    },
    "glicko2": {"tau": (0.3, 0.6, 1.0), "period_days": (1.0, 7.0, 30.0, 90.0), "initial_rd": (250.0, 350.0)},
    "elo": {"k": (8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0), "sc": (1.25, 2.5, 5.0, 20.0)},
}
# How an axis may grow past its ends: the factor of one step and the bounds it must stay in
# (luck P is bounded by docs/rules.md §4 on both sides and its grid already spans them; an
# initial RD beyond the cap of 350 would be capped at once).
STEPS: dict[str, tuple[float, float, float]] = {
    "sc": (2.0, 0.01, 400.0),
    "c": (2.0, 0.01, 400.0),
    "initial_rd": (1.4, 30.0, 350.0),
    "tau": (2.0, 0.05, 4.0),
    "period_days": (3.0, 1.0 / 24.0, 3650.0),
    "k": (1.5, 1.0, 400.0),
    "rd_min": (2.0, 5.0, 200.0),
}
EXTEND = 3  # at most this many extensions of an engine's grid
TUNED = tuple(engine for engine in ENGINES if engine in GRIDS)  # the engines a 1 v 1 file is tuned over

Progress = Callable[[int, int], None]


class Candidate(NamedTuple):
    """One engine, parameter set and edge of the first-named side, with its validation metrics."""

    engine: str
    params: dict[str, Any]
    validation: Metrics
    edge: float = 0.0


class Tuned(NamedTuple):
    """An engine's best parameter set: its validation metrics and predictions, and its test predictions.

    ``validation_probabilities`` are the predictions of the validation slice, each made
    before its match; ``calibration.fit`` learns from them, never from the test part.
    ``edge`` is the first-named side's edge the predictions were made with (``replay.replay``).
    """

    engine: str
    params: dict[str, Any]
    validation: Metrics
    probabilities: list[float]
    validation_probabilities: list[float]
    edge: float = 0.0


class _Outcome(NamedTuple):
    """A task's candidates and, for a vectorised one, its best candidate's predictions from the validation slice on."""

    candidates: list[Candidate]
    best: Candidate | None
    test: list[float]


def grid(engine: str, grids: Mapping[str, Mapping[str, Sequence[Any]]] | None = None) -> list[dict[str, Any]]:
    """Every parameter set of ``engine``'s grid, as keyword arguments of ``Params``."""
    fields = (grids or GRIDS)[engine]
    return [dict(zip(fields, values, strict=True)) for values in itertools.product(*fields.values())]


def extended(
    axes: dict[str, list[Any]], best: dict[str, Any], steps: Mapping[str, tuple[float, float, float]] = STEPS
) -> list[dict[str, Any]]:
    """New points when ``best`` sits at an open end of an axis; ``axes`` grows in place.

    Each extended axis gets one more step past its end, crossed with every value of the
    other axes (so the new points are a slab of the grid, not a single guess). Only the
    axes named in ``steps`` grow (a choice such as ``team_delta`` does not).
    """
    points: list[dict[str, Any]] = []
    for name, axis in axes.items():
        if name not in steps:
            continue
        values = [value for value in axis if value is not None]
        factor, low, high = steps[name]
        added: list[float | None] = []
        if best[name] == max(values) and max(values) * factor <= high:
            added.append(_round(max(values) * factor))
        if best[name] == min(values) and min(values) / factor >= low:
            added.append(_round(min(values) / factor))
        for value in added:
            others = {key: (value,) if key == name else tuple(axes[key]) for key in axes}
            points += [dict(zip(others, combo, strict=True)) for combo in itertools.product(*others.values())]
        axis += added
    return points


def _round(value: float) -> float:
    """Three significant digits: an extended axis reads 179, not 178.57142857142858."""
    return float(f"{value:.3g}")


_MATCHES: Sequence[Match] = ()
_ROUNDS: vector.Rounds | None = None


def _init(matches: Sequence[Match], rounds: vector.Rounds | None) -> None:
    global _MATCHES, _ROUNDS
    _MATCHES = matches
    _ROUNDS = rounds


Point = tuple[dict[str, Any], float]  # a parameter set and an edge of the first-named side
Task = tuple[str, list[Point], int, int]


def _run(task: Task) -> _Outcome:
    """Score one task's points on the validation slice ``[validation_start, test_start)``."""
    engine, points, test_start, validation_start = task
    if _ROUNDS is not None and engine in vector.ENGINES:
        return _vectorised(engine, points, test_start, validation_start)
    candidates = []
    for params, edge in points:
        predictions = replay_engine(
            _MATCHES[:test_start], engine, Params(**params), score_from=validation_start, edge=edge
        )
        candidates.append(Candidate(engine, params, metrics(predictions.probabilities, predictions.outcomes), edge))
    return _Outcome(candidates, None, [])


def _vectorised(engine: str, points: list[Point], test_start: int, validation_start: int) -> _Outcome:
    """Every point in one pass over all matches; validation chooses, the test part is kept for the best."""
    assert _ROUNDS is not None
    parameter_sets = [Params(**params) for params, _edge in points]
    edges = [edge for _params, edge in points]
    probabilities = vector.replay_sets(_ROUNDS, engine, parameter_sets, score_from=validation_start, edges=edges)
    cut = test_start - validation_start
    scores = vector.column_metrics(probabilities[:cut], _ROUNDS.score[validation_start:test_start])
    candidates = [Candidate(engine, params, score, edge) for (params, edge), score in zip(points, scores, strict=True)]
    if engine not in vector.EXACT:  # chosen here, its test figures come from the engine itself
        return _Outcome(candidates, None, [])
    best = min(range(len(points)), key=lambda index: scores[index].log_loss)
    return _Outcome(candidates, candidates[best], probabilities[:, best].tolist())


def _test(task: tuple[str, dict[str, Any], int, float]) -> list[float]:
    """One set's predictions from the validation slice on (validation, then test)."""
    engine, params, validation_start, edge = task
    return replay_engine(_MATCHES, engine, Params(**params), score_from=validation_start, edge=edge).probabilities


def _edge_gain(task: tuple[str, dict[str, Any], float, int, int]) -> Difference:
    """The paired log-loss difference on the validation slice of one set with ``edge`` against none."""
    engine, params, edge, test_start, validation_start = task
    if _ROUNDS is not None and engine in vector.ENGINES:
        both = vector.replay_sets(
            _ROUNDS, engine, [Params(**params)] * 2, score_from=validation_start, end=test_start, edges=[edge, 0.0]
        )
        with_edge, without = both[:, 0].tolist(), both[:, 1].tolist()
        outcomes = _ROUNDS.score[validation_start:test_start].tolist()
    else:
        played = [
            replay_engine(_MATCHES[:test_start], engine, Params(**params), score_from=validation_start, edge=value)
            for value in (edge, 0.0)
        ]
        with_edge, without, outcomes = played[0].probabilities, played[1].probabilities, played[0].outcomes
    return paired_difference(with_edge, without, outcomes)


def _quiet(done: int, total: int) -> None:
    return None


def stderr_progress(done: int, total: int) -> None:
    """A line on stderr at every tenth of the grid: ``tune: 42/176 parameter sets``."""
    if done == total or done % max(1, total // 10) == 0:
        sys.stderr.write(f"tune: {done}/{total} parameter sets\n")
        sys.stderr.flush()


def _tasks(
    engine: str, points: list[Point], processes: int, vectorised: bool, test_start: int, validation_start: int
) -> list[Task]:
    """A vectorised engine's points in one slice per process; any other engine's one point a task."""
    if vectorised and engine in vector.ENGINES:
        size = -(-len(points) // processes)
        slices = [points[start : start + size] for start in range(0, len(points), size)]
    else:
        slices = [[point] for point in points]
    return [(engine, chunk, test_start, validation_start) for chunk in slices]


class _Search:
    """The state of one tuning: the best candidate of each engine so far and its predictions."""

    def __init__(
        self, pool: Any, processes: int, vectorised: bool, test_start: int, validation_start: int, progress: Progress
    ) -> None:
        self.pool = pool
        self.processes = processes
        self.vectorised = vectorised
        self.test_start = test_start
        self.validation_start = validation_start
        self.progress = progress
        self.best: dict[str, Candidate] = {}
        self.tests: dict[str, list[float]] = {}
        self.done = self.total = 0

    def run(self, pending: Mapping[str, list[Point]]) -> None:
        """Score every engine's pending points; each engine's best so far is kept."""
        tasks = [
            task
            for engine, points in pending.items()
            for task in _tasks(engine, points, self.processes, self.vectorised, self.test_start, self.validation_start)
        ]
        self.total += sum(len(points) for points in pending.values())
        for outcome in self.pool.imap_unordered(_run, tasks):
            self.done += len(outcome.candidates)
            self.progress(self.done, self.total)
            for candidate in outcome.candidates:
                current = self.best.get(candidate.engine)
                if current is None or candidate.validation.log_loss < current.validation.log_loss:
                    self.best[candidate.engine] = candidate
            if outcome.best is not None and self.best[outcome.best.engine] is outcome.best:
                self.tests[outcome.best.engine] = outcome.test

    def grid(
        self,
        engines: Sequence[str],
        grids: Mapping[str, Mapping[str, Sequence[float | None]]] | None,
        extend: int,
        edges: Mapping[str, float],
    ) -> None:
        """Each engine's grid at its edge, extended where its best sits at an open end."""
        axes = {engine: {name: list(values) for name, values in (grids or GRIDS)[engine].items()} for engine in engines}
        pending = {engine: [(params, edges[engine]) for params in grid(engine, grids)] for engine in engines}
        for _pass in range(extend + 1):
            if not pending:
                break
            self.run(pending)
            added = {engine: extended(axes[engine], self.best[engine].params) for engine in engines}
            pending = {engine: [(params, edges[engine]) for params in sets] for engine, sets in added.items() if sets}

    def edges(self, engines: Sequence[str]) -> None:
        """Each engine's edge of the first-named side, searched for its best parameter set.

        ``EDGES`` first, in one pass; doubled while the best sits at an end (``EXTEND`` times at
        most, up to ``EDGE_BOUND``), then ``REFINE`` rounds each trying the midpoints between the
        best edge and its two neighbours.
        """
        chosen = {engine: self.best[engine].params for engine in engines}
        tried = {engine: {self.best[engine].edge} for engine in engines}
        pending = {engine: [edge for edge in EDGES if edge not in tried[engine]] for engine in engines}
        extensions = dict.fromkeys(engines, 0)
        refinements = dict.fromkeys(engines, 0)
        while pending:
            for engine, values in pending.items():
                tried[engine].update(values)
            self.run({engine: [(chosen[engine], edge) for edge in values] for engine, values in pending.items()})
            following: dict[str, list[float]] = {}
            for engine in pending:
                best = self.best[engine].edge  # only points with the chosen set were scored
                axis = sorted(tried[engine])
                at_end = best in (axis[0], axis[-1]) and best != 0.0
                if at_end and extensions[engine] < EXTEND and abs(2.0 * best) <= EDGE_BOUND:
                    extensions[engine] += 1
                    following[engine] = [_round_edge(2.0 * best)]
                    continue
                if refinements[engine] < REFINE:
                    refinements[engine] += 1
                    index = axis.index(best)
                    sides = [axis[i] for i in (index - 1, index + 1) if 0 <= i < len(axis)]
                    middles = [_round_edge((best + side) / 2.0) for side in sides]
                    middles = [edge for edge in middles if edge not in tried[engine]]
                    if middles:
                        following[engine] = middles
            pending = following


# The first-named side's edge, in rating points: the values every engine's best set is tried at
# in one pass (a football file's home advantage is about 70 points, chess's white about 35),
# doubled past an end up to EDGE_BOUND, then refined once by the midpoints to the neighbours.
_STEPS = (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 80.0, 100.0, 125.0, 150.0, 200.0)
EDGES = (*(-step for step in reversed(_STEPS)), 0.0, *_STEPS)
EDGE_BOUND = 800.0
REFINE = 1


def _round_edge(value: float) -> float:
    """Edges to a tenth of a point (0.0 for −0.0)."""
    return round(value, 1) + 0.0


def tune(
    matches: Sequence[Match],
    test_start: int,
    *,
    engines: Sequence[str] = TUNED,
    processes: int = 2,
    progress: Progress = _quiet,
    grids: Mapping[str, Mapping[str, Sequence[float | None]]] | None = None,
    extend: int = EXTEND,
    vectorised: bool = True,
    edge: bool = False,
) -> list[Tuned]:
    """Each engine's best grid point on the validation slice, with its test predictions.

    ``matches[:test_start]`` is the training part; its last 20% (snapped back to a change
    of time) scores the grid. The result is sorted by validation log-loss, best first.
    ``vectorised=False`` replays every set through ``Engine.rate`` (the reference path).
    ``edge``: the first side of each match may have an edge (a home team): after the grid,
    each engine's edge is searched for its best set. The edge found is kept only when it
    predicts the validation slice better than none by more than twice the paired standard
    error (the issue's rule; otherwise the sides are taken as even and the edge stays 0).
    An engine that keeps an edge has its grid searched again at that edge, and its edge once
    more for the new best set.
    """
    validation_start = split_index(list(matches[:test_start]))
    rounds = vector.rounds(matches) if vectorised and any(engine in vector.ENGINES for engine in engines) else None
    with multiprocessing.Pool(processes, initializer=_init, initargs=(matches, rounds)) as pool:
        search = _Search(pool, processes, rounds is not None, test_start, validation_start, progress)
        search.grid(engines, grids, extend, {engine: 0.0 for engine in engines})
        if edge:
            even, even_tests = dict(search.best), dict(search.tests)
            search.edges(engines)
            found = [engine for engine in engines if search.best[engine].edge != 0.0]
            gains = pool.map(
                _edge_gain,
                [(e, search.best[e].params, search.best[e].edge, test_start, validation_start) for e in found],
            )
            moved = []
            for engine, gain in zip(found, gains, strict=True):
                if gain.mean < 0.0 and gain.significant:
                    moved.append(engine)
                else:  # no real edge: back to the even sides' best and its predictions
                    search.best[engine] = even[engine]
                    search.tests.pop(engine, None)
                    if engine in even_tests:
                        search.tests[engine] = even_tests[engine]
            if moved:
                search.grid(moved, grids, extend, {engine: search.best[engine].edge for engine in moved})
                search.edges(moved)
        winners = sorted(search.best.values(), key=lambda candidate: candidate.validation.log_loss)
        tests = search.tests
        scalar = [winner for winner in winners if winner.engine not in tests]
        for winner, probabilities in zip(
            scalar,
            pool.map(_test, [(w.engine, w.params, validation_start, w.edge) for w in scalar]),
            strict=True,
        ):
            tests[winner.engine] = probabilities
    cut = test_start - validation_start
    return [
        Tuned(
            winner.engine,
            winner.params,
            winner.validation,
            tests[winner.engine][cut:],
            tests[winner.engine][:cut],
            winner.edge,
        )
        for winner in winners
    ]
