"""The published TrueSkill and openskill packages as peers on team games (``--packages``, issue 30).

Issue 30's target is to beat what a ladder could use off the shelf. Two packages, used as
their documentation shows, replay the same games and are scored on the same test part:

- ``trueskill`` (0.4.5, Heungsub Lee's): ``TrueSkill(beta=…, tau=…).rate(teams, ranks)``
  with its default draw probability 0.10, and the win probability its documentation gives
  (``Φ((Σμa − Σμb)/√(n·β² + Σσ²))`` over the n players of both sides);
- ``openskill`` (6.2.0): ``ThurstoneMostellerFull(beta=…, tau=…)`` (Weng and Lin 2011's
  Thurstone–Mosteller model with full pairing), ``rate(teams, ranks)`` and ``predict_win``.

Both start every player at μ 25, σ 25/3 and read a free-for-all's ranks directly; their
predictions are one per pair of sides, as the engines'. Their β and τ are tuned like an
engine's: a small grid around their defaults (β 25/6, τ 25/300), scored on the validation
slice of the training part and extended at an open end (``tune.extended``); the best is
scored once on the test part. They are development dependencies (requirements-dev.txt),
imported only when asked for; a missing one stops with ``MissingPackage``.
"""

from __future__ import annotations

import importlib
import itertools
import math
import multiprocessing
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NamedTuple

from ratings.backtest.data import Game, split_index
from ratings.backtest.metrics import Metrics, metrics
from ratings.backtest.replay import Predictions
from ratings.backtest.tune import EXTEND, Progress, _quiet, extended
from ratings.engines.base import pair_score

TRUESKILL, OPENSKILL = "trueskill_package", "openskill_package"
PEERS = (TRUESKILL, OPENSKILL)
PINS = {TRUESKILL: "trueskill==0.4.5", OPENSKILL: "openskill==6.2.0"}
MU, SIGMA = 25.0, 25.0 / 3.0  # both packages' new player
POINT = 42.0  # one TrueSkill point on the ladder's scale (ratings.engines.values.TRUESKILL_POINT)
PEER_GRID = {"beta": (25.0 / 12.0, 25.0 / 6.0, 25.0 / 3.0), "tau": (25.0 / 600.0, 25.0 / 300.0, 25.0 / 150.0)}
PEER_STEPS = {"beta": (2.0, 0.05, 200.0), "tau": (2.0, 0.0005, 20.0)}


class MissingPackage(RuntimeError):
    """A peer package is not installed; the message is one line naming the pin to install."""


class PeerTuned(NamedTuple):
    """A package's best β and τ on the validation slice, and its predictions of the test part."""

    name: str
    params: dict[str, float]
    validation: Metrics
    predictions: Predictions


def _module(peer: str) -> ModuleType:
    name = PINS[peer].split("==")[0]
    try:
        return importlib.import_module("openskill.models" if peer == OPENSKILL else name)
    except ImportError:
        raise MissingPackage(
            f"--packages needs the {name} package: pip install {PINS[peer]} (or -r requirements-dev.txt)"
        ) from None


def require(peers: Sequence[str] = PEERS) -> None:
    """Raise ``MissingPackage`` now, before a long tuning, if a peer package is missing."""
    for peer in peers:
        _module(peer)


def peer_replay(games: Sequence[Game], peer: str, beta: float, tau: float, *, score_from: int = 0) -> Predictions:
    """Replay ``games`` through one package with ``beta`` and ``tau``; predictions of ``games[score_from:]``."""
    module = _module(peer)
    if peer == TRUESKILL:
        env = module.TrueSkill(mu=MU, sigma=SIGMA, beta=beta, tau=tau, backend=None)
        new, cdf = env.create_rating, env.cdf

        def predict(a: Sequence[Any], b: Sequence[Any]) -> float:
            spread = len(a) * beta * beta + len(b) * beta * beta
            spread += math.fsum(r.sigma * r.sigma for r in itertools.chain(a, b))
            return float(cdf((math.fsum(r.mu for r in a) - math.fsum(r.mu for r in b)) / math.sqrt(spread)))

        rate = env.rate
    else:
        model = module.ThurstoneMostellerFull(mu=MU, sigma=SIGMA, beta=beta, tau=tau)
        new, rate = model.rating, model.rate

        def predict(a: Sequence[Any], b: Sequence[Any]) -> float:
            return float(model.predict_win([list(a), list(b)])[0])

    players: dict[str, Any] = {}
    probabilities: list[float] = []
    outcomes: list[float] = []
    favourites: list[float] = []
    for index, (_at, sides, placements) in enumerate(games):
        teams = [[players.get(name) or new() for name in side] for side in sides]
        if index >= score_from:
            for i in range(len(sides)):
                for j in range(i + 1, len(sides)):
                    probabilities.append(predict(teams[i], teams[j]))
                    outcomes.append(pair_score(placements[i], placements[j]))
                    top = max(r.mu for r in itertools.chain(teams[i], teams[j]))
                    favourites.append(1500.0 + (top - MU) * POINT)
        rated = rate(teams, ranks=[place - 1 for place in placements])
        for side, after in zip(sides, rated, strict=True):
            for name, rating in zip(side, after, strict=True):
                players[name] = rating
    return Predictions(probabilities, outcomes, favourites)


_GAMES: Sequence[Game] = ()


def _init(games: Sequence[Game]) -> None:
    global _GAMES
    _GAMES = games


def _score(task: tuple[int, str, dict[str, float], int, int]) -> tuple[int, str, dict[str, float], Metrics]:
    order, peer, params, test_start, validation_start = task
    predictions = peer_replay(_GAMES[:test_start], peer, params["beta"], params["tau"], score_from=validation_start)
    return order, peer, params, metrics(predictions.probabilities, predictions.outcomes)


def _test(task: tuple[str, dict[str, float], int]) -> Predictions:
    peer, params, test_start = task
    return peer_replay(_GAMES, peer, params["beta"], params["tau"], score_from=test_start)


def tune_peers(
    games: Sequence[Game],
    test_start: int,
    *,
    peers: Sequence[str] = PEERS,
    processes: int = 2,
    progress: Progress = _quiet,
    extend: int = EXTEND,
) -> list[PeerTuned]:
    """Each package's β and τ chosen on the validation slice, scored on ``games[test_start:]``."""
    require(peers)
    validation_start = split_index(list(games[:test_start]))
    keys = list(PEER_GRID)
    points = [dict(zip(keys, values, strict=True)) for values in itertools.product(*PEER_GRID.values())]
    axes: dict[str, dict[str, list[Any]]] = {peer: {k: list(v) for k, v in PEER_GRID.items()} for peer in peers}
    pending = {peer: list(points) for peer in peers}
    best: dict[str, tuple[dict[str, float], Metrics]] = {}
    done = total = 0
    with multiprocessing.Pool(processes, initializer=_init, initargs=(games,)) as pool:
        for _pass in range(extend + 1):
            if not pending:
                break
            sets = [(peer, params) for peer, chunk in pending.items() for params in chunk]
            tasks = [(order, peer, params, test_start, validation_start) for order, (peer, params) in enumerate(sets)]
            total += len(tasks)
            results = []
            for result in pool.imap_unordered(_score, tasks):
                results.append(result)
                done += 1
                progress(done, total)
            for _order, peer, params, score in sorted(results, key=lambda result: result[0]):
                if peer not in best or score.log_loss < best[peer][1].log_loss:
                    best[peer] = (params, score)
            added = {peer: extended(axes[peer], best[peer][0], PEER_STEPS) for peer in pending}
            pending = {peer: chunk for peer, chunk in added.items() if chunk}
        tests = pool.map(_test, [(peer, best[peer][0], test_start) for peer in peers])
    return [PeerTuned(peer, best[peer][0], best[peer][1], test) for peer, test in zip(peers, tests, strict=True)]
