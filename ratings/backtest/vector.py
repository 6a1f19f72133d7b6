"""Replaying many parameter sets in one pass, with NumPy (issue 17, item 6).

``replay.replay`` runs one parameter set through ``Engine.rate`` at a few microseconds a
match; a tuning grid of 48 sets over a million matches would take minutes. Here every
player's state is a row of arrays with one column per parameter set, and each step of the
replay updates all columns at once.

Matches are also taken in *rounds*: a match's round is one more than the latest round of
either player's earlier matches, so no player plays twice in a round and the matches of a
round do not depend on each other. Replaying round by round updates every player from the
very values the file order would, so the predictions are the scalar engine's (to rounding,
about 1e-15; the tests compare every prediction to 1e-9).

The maths is ``GlickoFamily._rate_1v1`` and ``Elo._rate_1v1`` written for arrays (docs/rules.md
§1–§4, §5, §7): 1 v 1 results only, as a backtest file holds. Glicko-2's volatility is
``glicko2_volatility``'s Illinois solve run on every element at once, each element
stepping until its own bracket closes, as the scalar loop does (to about 1e-6: ``EXACT``).
An optional RD floor
(``rd_min``) holds a stored RD at or above it after each update; the rating's change is
computed from the RD before the floor. An optional *edge* per set (``replay.replay``'s
``edge``) is added to a's rating in the prediction and the update, and never stored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ratings.backtest.data import Match
from ratings.backtest.metrics import BINS, EPSILON, Metrics
from ratings.backtest.replay import INITIAL_RATING
from ratings.engines import Params
from ratings.engines.values import SECONDS_PER_DAY

ENGINES = ("tgr", "glicko1", "glicko2", "elo")
# Engines whose vectorised predictions are the scalar engine's to rounding (≤ 1e-9, tested).
# Glicko-2's agree to about 1e-6 only: its volatility solve stops when its bracket is within
# 1e-6, and NumPy's exp and log may round differently from the C library's by one unit in
# the last place, which can move that stop by one step. Good enough to choose parameters by;
# the tuner replays a chosen Glicko-2 set through the engine itself for the figures it reports.
EXACT = ("tgr", "glicko1", "elo")

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

_Q = math.log(10.0) / 400.0  # Glickman's q, as ratings.engines.probability.Q
_Q2 = _Q * _Q
_G_K = 3.0 * _Q * _Q / (math.pi * math.pi)  # g(RD) = 1/sqrt(1 + _G_K·RD²)
_SCALE = 400.0 / math.log(10.0)  # Glicko-2's 173.7178…, as ratings.engines.glicko.GLICKO2_SCALE
_EPSILON = 1e-6  # glicko2_volatility's convergence
INITIAL_VOLATILITY = 0.06


class Rounds(NamedTuple):
    """Matches as arrays, in replay order by round (see the module docstring).

    ``order`` lists match indices round by round (file order within a round); ``bounds``
    holds where each round starts in ``order`` and where the last one ends.
    ``first_at`` is each player's first game, where a new player's ``rd_as_of`` starts.
    """

    player_a: Ints
    player_b: Ints
    at: Floats
    score: Floats
    order: Ints
    bounds: Ints
    first_at: Floats
    players: int


def rounds(matches: Sequence[Match]) -> Rounds:
    """Encode ``matches`` once: player numbers, each match's round, the replay order."""
    numbers: dict[str, int] = {}
    latest: list[int] = []
    count = len(matches)
    player_a = np.empty(count, dtype=np.int64)
    player_b = np.empty(count, dtype=np.int64)
    level = np.empty(count, dtype=np.int64)
    first_at: list[float] = []
    for index, (at, name_a, name_b, _score) in enumerate(matches):
        a = numbers.setdefault(name_a, len(numbers))
        b = numbers.setdefault(name_b, len(numbers))
        if a == len(latest):
            latest.append(0)
            first_at.append(at)
        if b == len(latest):
            latest.append(0)
            first_at.append(at)
        step = (latest[a] if latest[a] > latest[b] else latest[b]) + 1
        latest[a] = latest[b] = step
        player_a[index] = a
        player_b[index] = b
        level[index] = step
    order = np.argsort(level, kind="stable")
    sorted_levels = level[order]
    starts = np.flatnonzero(np.diff(sorted_levels)) + 1
    bounds = np.concatenate(([0], starts, [count])).astype(np.int64)
    return Rounds(
        player_a,
        player_b,
        np.fromiter((match.at for match in matches), dtype=np.float64, count=count),
        np.fromiter((match.score_a for match in matches), dtype=np.float64, count=count),
        order.astype(np.int64),
        bounds,
        np.array(first_at, dtype=np.float64),
        len(numbers),
    )


class _Columns(NamedTuple):
    """Each parameter set's constants, one column each (shape ``[1, n_sets]``)."""

    growth: Floats  # RD² added per idle second
    rd_max: Floats
    initial_rd: Floats
    luck: Floats  # 1 − P: TGR's luck weighting is off at 0
    k: Floats
    rd_min: Floats  # 0 without a floor
    period: Floats  # Glicko-2's rating period in seconds
    tau: Floats
    edge: Floats  # rating points the first-named side plays above its rating


def _columns(engine: str, sets: Sequence[Params], rd_min: float | None, edges: Sequence[float] | None) -> _Columns:
    def column(values: list[float]) -> Floats:
        return np.array(values, dtype=np.float64)[None, :]

    growth = []
    for params in sets:
        # The same float operations as GlickoFamily.__init__, so the growth is the engine's to the bit.
        per_day = params.c * params.c / params.period_days if engine == "glicko1" else params.sc * params.sc
        growth.append(per_day / SECONDS_PER_DAY)
    floors = []
    for params in sets:  # Elo's RD has no floor (Params.rd_min is the Glicko family's)
        floor = rd_min if rd_min is not None else params.rd_min
        floors.append(0.0 if floor is None or engine == "elo" else float(floor))
    return _Columns(
        column(growth),
        column([params.rd_max for params in sets]),
        column([params.initial_rd for params in sets]),
        column([1.0 - params.luck_p if engine == "tgr" else 0.0 for params in sets]),
        column([params.k for params in sets]),
        column(floors),
        column([params.period_days * SECONDS_PER_DAY for params in sets]),
        column([params.tau for params in sets]),
        column([float(edge) for edge in edges] if edges is not None else [0.0] * len(sets)),
    )


def _logistic(x: Floats) -> Floats:
    """``1/(1 + e^(−x))``; an overflow of e^(−x) gives 0, as it should."""
    with np.errstate(over="ignore"):
        result: Floats = 1.0 / (1.0 + np.exp(-x))
    return result


def replay_sets(
    data: Rounds,
    engine: str,
    sets: Sequence[Params],
    *,
    score_from: int = 0,
    end: int | None = None,
    rd_min: float | None = None,
    plain_elo: bool = False,
    edges: Sequence[float] | None = None,
) -> Floats:
    """P(a beats b) of ``matches[score_from:end]`` under each of ``sets``: shape ``[n, n_sets]``.

    The same predictions as ``replay.replay`` for each set (the site's win probability
    before each update; ``plain_elo``: Elo's own expectation). ``rd_min`` floors every
    set's RD after an update in place of each set's own ``Params.rd_min`` (Elo: never).
    ``edges``: each set's edge of the first-named side (``replay.replay``), 0 by default.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)} for a vectorised replay, got {engine!r}")
    if plain_elo and engine != "elo":
        raise ValueError(f"plain_elo predicts with Elo's own expectation: engine must be elo, got {engine!r}")
    if edges is not None and len(edges) != len(sets):
        raise ValueError("edges needs one edge for each parameter set")
    end = len(data.at) if end is None else end
    columns = _columns(engine, sets, rd_min, edges)
    shape = (data.players, len(sets))
    rating = np.full(shape, INITIAL_RATING)
    rd = np.broadcast_to(columns.initial_rd, shape).copy()
    as_of = data.first_at.copy()
    glicko2 = engine == "glicko2"
    volatility = np.full(shape, INITIAL_VOLATILITY)
    out = np.empty((max(end - score_from, 0), len(sets)))
    order, bounds = data.order, data.bounds
    step = _elo_step if engine == "elo" else _glicko_step
    for round_index in range(len(bounds) - 1):
        indices = order[bounds[round_index] : bounds[round_index + 1]]
        if end < len(data.at):
            indices = indices[indices < end]
            if not len(indices):
                continue
        a = data.player_a[indices]
        b = data.player_b[indices]
        at = data.at[indices]
        rating_a = rating[a]
        rating_b = rating[b]
        if glicko2:  # φ² grows by σ² a period (Glicko2._state_growth_per_second)
            vol_a = volatility[a]
            vol_b = volatility[b]
            growth_a = np.square(_SCALE * vol_a) / columns.period
            growth_b = np.square(_SCALE * vol_b) / columns.period
        else:
            growth_a = growth_b = columns.growth
        rd_a = np.minimum(np.sqrt(np.square(rd[a]) + growth_a * (at - as_of[a])[:, None]), columns.rd_max)
        rd_b = np.minimum(np.sqrt(np.square(rd[b]) + growth_b * (at - as_of[b])[:, None]), columns.rd_max)
        diff = (rating_a + columns.edge) - rating_b
        rd_a2 = rd_a * rd_a
        rd_b2 = rd_b * rd_b
        if plain_elo:
            probability = _logistic(diff * (math.log(10.0) / 400.0))
        else:
            probability = _logistic(diff * (_Q / np.sqrt(1.0 + _G_K * (rd_a2 + rd_b2))))
        scored = indices >= score_from
        if scored.any():
            out[indices[scored] - score_from] = probability[scored]
        score = data.score[indices][:, None]
        delta_a, delta_b, rd_new_a, rd_new_b = step(diff, rd_a2, rd_b2, score, probability, columns)
        if glicko2:
            volatility[a], volatility[b] = _volatilities(diff, rd_a, rd_b, vol_a, vol_b, score, columns.tau)
        rating[a] = rating_a + delta_a
        rating[b] = rating_b + delta_b
        rd[a] = np.maximum(rd_new_a, columns.rd_min)
        rd[b] = np.maximum(rd_new_b, columns.rd_min)
        as_of[a] = at
        as_of[b] = at
    return out


def _glicko_step(
    diff: Floats, rd_a2: Floats, rd_b2: Floats, score: Floats, probability: Floats, columns: _Columns
) -> tuple[Floats, Floats, Floats, Floats]:
    """``GlickoFamily._rate_1v1`` (module docstring of ``ratings.engines.glicko``) for arrays."""
    g_a = 1.0 / np.sqrt(1.0 + _G_K * rd_b2)  # a's update sees b's RD
    g_b = 1.0 / np.sqrt(1.0 + _G_K * rd_a2)
    e_a = _logistic(g_a * diff * _Q)
    e_b = 1.0 - _logistic(g_b * diff * _Q)
    # TGR's luck weighting (docs/rules.md §4) from P(a beats b) with both RDs: the prediction
    # made before the update, unless the caller predicted with plain Elo (never for TGR).
    xd = np.abs(score - probability)
    weight = 1.0 - 2.0 * columns.luck * xd * (1.0 + 2.0 * xd)
    rd2_a = 1.0 / (1.0 / rd_a2 + _Q2 * (g_a * g_a * e_a * (1.0 - e_a)))
    rd2_b = 1.0 / (1.0 / rd_b2 + _Q2 * (g_b * g_b * e_b * (1.0 - e_b)))
    delta_a = _Q * rd2_a * (g_a * (score - e_a)) * weight
    delta_b = _Q * rd2_b * (g_b * ((1.0 - score) - e_b)) * weight
    return delta_a, delta_b, np.sqrt(rd2_a), np.sqrt(rd2_b)


def _volatilities(
    diff: Floats, rd_a: Floats, rd_b: Floats, vol_a: Floats, vol_b: Floats, score: Floats, tau: Floats
) -> tuple[Floats, Floats]:
    """Both players' σ' (``Glicko2._volatility``): v = 1/(g²E(1 − E)), Δ = v·g(s − E)."""
    g_a = 1.0 / np.sqrt(1.0 + _G_K * (rd_b * rd_b))
    g_b = 1.0 / np.sqrt(1.0 + _G_K * (rd_a * rd_a))
    e_a = _logistic(g_a * diff * _Q)
    e_b = 1.0 - _logistic(g_b * diff * _Q)
    shape = (2, *e_a.shape)
    v_inverse = np.stack((g_a * g_a * e_a * (1.0 - e_a), g_b * g_b * e_b * (1.0 - e_b)))
    total = np.stack((g_a * (score - e_a), g_b * ((1.0 - score) - e_b)))
    sigma = np.stack((vol_a, vol_b))
    phi = np.stack((rd_a, rd_b)) / _SCALE
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        v = 1.0 / v_inverse
        solved = volatility_solve(
            phi.ravel(), sigma.ravel(), (v * total).ravel(), v.ravel(), np.broadcast_to(tau, shape).ravel()
        )
    kept = ~(v_inverse > 0.0) | ~(v <= 1e100)
    new = np.where(kept, sigma, solved.reshape(shape))
    return new[0], new[1]


def volatility_solve(phi: Floats, sigma: Floats, delta: Floats, v: Floats, tau: Floats) -> Floats:
    """``glicko2_volatility`` (Glickman 2012, step 5) for flat arrays, element by element.

    Every element follows the scalar's own steps: the same bracket, the same Illinois
    updates, stopping when its own bracket is within 1e-6 (or after 200 steps).
    """
    a = np.log(sigma * sigma)
    phi2_v = phi * phi + v
    excess = delta * delta - phi2_v
    tau2 = tau * tau

    def f(x: Floats) -> Floats:
        ex = np.exp(x)
        result: Floats = 0.5 * (ex / (phi2_v + ex)) * ((excess - ex) / (phi2_v + ex)) - (x - a) / tau2
        return result

    big_a = a.copy()
    f_a = f(a)
    positive = excess > 0.0
    big_b = np.where(positive, np.log(np.where(positive, excess, 1.0)), a - tau)
    f_b = f(big_b)
    searching = ~positive & (f_b < 0.0)
    k = 1
    while searching.any() and k < 1000:
        k += 1
        trial = a - k * tau
        big_b = np.where(searching, trial, big_b)
        f_b = np.where(searching, f(trial), f_b)
        searching &= f_b < 0.0
    for _ in range(200):
        active = np.abs(big_b - big_a) > _EPSILON
        if not active.any():
            break
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        swap = f_c * f_b <= 0.0
        big_a = np.where(active & swap, big_b, big_a)
        f_a = np.where(active, np.where(swap, f_b, f_a / 2.0), f_a)
        big_b = np.where(active, big_c, big_b)
        f_b = np.where(active, f_c, f_b)
    result: Floats = np.exp(big_a / 2.0)
    return result


def _elo_step(
    diff: Floats, rd_a2: Floats, rd_b2: Floats, score: Floats, probability: Floats, columns: _Columns
) -> tuple[Floats, Floats, Floats, Floats]:
    """``Elo._rate_1v1`` (docs/rules.md §7) for arrays: K moves the rating, RD as Glicko-1's."""
    e_a = _logistic(diff * (math.log(10.0) / 400.0))
    e_b = 1.0 - e_a
    delta_a = columns.k * (score - e_a)
    delta_b = columns.k * ((1.0 - score) - e_b)
    g_a = 1.0 / np.sqrt(1.0 + _G_K * rd_b2)
    g_b = 1.0 / np.sqrt(1.0 + _G_K * rd_a2)
    rd_new_a = 1.0 / np.sqrt(1.0 / rd_a2 + _Q2 * g_a * g_a * e_a * e_b)
    rd_new_b = 1.0 / np.sqrt(1.0 / rd_b2 + _Q2 * g_b * g_b * e_a * e_b)
    return delta_a, delta_b, rd_new_a, rd_new_b


def column_metrics(probabilities: Floats, outcomes: Floats) -> list[Metrics]:
    """``metrics.metrics`` of each column of ``probabilities`` (shape ``[n, n_sets]``), at once."""
    p = probabilities
    y = outcomes[:, None]
    n = len(outcomes)
    clipped = np.clip(p, EPSILON, 1.0 - EPSILON)
    log_loss = -(y * np.log(clipped) + (1.0 - y) * np.log(1.0 - clipped)).sum(axis=0) / n
    brier = np.square(p - y).sum(axis=0) / n
    half = (y == 0.5) | (p == 0.5)
    right = np.where(half, 0.5, np.where((p > 0.5) == (y == 1.0), 1.0, 0.0)).sum(axis=0) / n
    bins = np.minimum((p * BINS).astype(np.int64), BINS - 1)
    result = []
    for column in range(p.shape[1]):
        counts = np.bincount(bins[:, column], minlength=BINS)
        predicted = np.bincount(bins[:, column], weights=p[:, column], minlength=BINS)
        observed = np.bincount(bins[:, column], weights=outcomes, minlength=BINS)
        filled = counts > 0
        gaps = np.abs(observed[filled] / counts[filled] - predicted[filled] / counts[filled])
        ece = float(math.fsum(counts[filled] * gaps) / n)
        result.append(Metrics(float(log_loss[column]), float(brier[column]), float(right[column]), ece, n))
    return result
