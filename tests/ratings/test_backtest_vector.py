"""The vectorised replay (``ratings.backtest.vector``) and the tuner that uses it.

The oracle is the scalar replay through ``Engine.rate`` (``replay.replay``): every
prediction of every parameter set must agree to 1e-9. The RD floor is checked against a
hand computation from Glickman's formulas (docs/rules.md §2–§3).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ratings.backtest import vector
from ratings.backtest.data import Match, read_matches, split_index
from ratings.backtest.metrics import metrics
from ratings.backtest.replay import ELO_BASELINE, replay, replay_engine
from ratings.backtest.tune import extended, tune
from ratings.engines import Params, get_engine

ROOT = Path(__file__).resolve().parents[2]
FOOTBALL = ROOT / "tests" / "fixtures" / "intl_football_first_2000.csv"
SETS = {
    "tgr": [
        Params(),
        Params(sc=2.5, luck_p=1.0, initial_rd=250.0),
        Params(sc=5.0, luck_p=5.0 / 6.0, rd_max=300.0, initial_rd=300.0),
        Params(sc=0.0, luck_p=0.95),
        Params(sc=2.5, rd_min=120.0),
    ],
    "glicko1": [
        Params(),
        Params(c=2.5, initial_rd=150.0),
        Params(c=60.0, period_days=30.0),
        Params(c=2.5, rd_min=100.0),
    ],
    "elo": [Params(), Params(k=48.0, sc=2.5), Params(k=8.0, sc=40.0, initial_rd=200.0), Params(rd_min=100.0)],
}


@pytest.fixture(scope="module")
def football() -> list[Match]:
    return read_matches(FOOTBALL)


@pytest.mark.parametrize("engine", sorted(SETS))
def test_every_prediction_matches_the_scalar_engine(football, engine):
    sets = SETS[engine]

    probabilities = vector.replay_sets(vector.rounds(football), engine, sets, score_from=300)

    assert probabilities.shape == (len(football) - 300, len(sets))
    for column, params in enumerate(sets):
        scalar = replay_engine(football, engine, params, score_from=300).probabilities
        assert np.abs(probabilities[:, column] - np.array(scalar)).max() <= 1e-9


def test_a_prefix_replay_and_plain_elo_match_the_scalar_ones(football):
    data = vector.rounds(football)

    prefix = vector.replay_sets(data, "tgr", [Params(sc=2.5)], score_from=1000, end=1500)
    plain = vector.replay_sets(data, "elo", [ELO_BASELINE], plain_elo=True)

    scalar_prefix = replay_engine(football[:1500], "tgr", Params(sc=2.5), score_from=1000).probabilities
    scalar_plain = replay(football, get_engine("elo", ELO_BASELINE), plain_elo=True).probabilities
    assert np.abs(prefix[:, 0] - np.array(scalar_prefix)).max() <= 1e-9
    assert np.abs(plain[:, 0] - np.array(scalar_plain)).max() <= 1e-9


def test_no_player_plays_twice_in_a_round_and_every_match_is_replayed_once(football):
    data = vector.rounds(football)

    assert sorted(data.order.tolist()) == list(range(len(football)))
    for start, stop in zip(data.bounds[:-1], data.bounds[1:], strict=True):
        indices = data.order[start:stop]
        players = np.concatenate((data.player_a[indices], data.player_b[indices]))
        assert len(set(players.tolist())) == len(players)
        assert (np.diff(indices) > 0).all()  # file order within a round


def _hand_rd_floor_second_prediction(rd_min: float) -> float:
    """New players a and b: a wins at t = 0, then they play again at the same instant.

    Game 1 (docs/rules.md §3, P = 1): E = ½, g = g(350), RD'² = 1/(1/350² + q²g²/4),
    r' = 1500 ± q·RD'²·g·½; the floor lifts RD' to ``rd_min``. Game 2's prediction
    (docs/rules.md §2) uses both floored RDs: no time passed, so no growth.
    """
    q = math.log(10.0) / 400.0
    g = 1.0 / math.sqrt(1.0 + 3.0 * q * q * 350.0**2 / math.pi**2)
    rd2 = 1.0 / (1.0 / 350.0**2 + q * q * g * g / 4.0)
    assert math.sqrt(rd2) < rd_min  # the floor binds
    delta = q * rd2 * g * 0.5
    big_g = 1.0 / math.sqrt(1.0 + 3.0 * q * q * 2.0 * rd_min**2 / math.pi**2)
    return 1.0 / (1.0 + 10.0 ** (-big_g * (2.0 * delta) / 400.0))


def test_rd_floor_binds_in_the_replay_as_in_the_engine(football):
    # With SC 2.5 busy teams' RDs fall below 120 in the football sample: the floor binds, so
    # SETS' floored sets test it against the engine (and Elo's, which has no floor, ignores it).
    data = vector.rounds(football)
    both = vector.replay_sets(data, "tgr", [Params(sc=2.5), Params(sc=2.5, rd_min=120.0)])
    assert np.abs(both[:, 0] - both[:, 1]).max() > 1e-2


def test_rd_floor_holds_the_rd_after_an_update_by_hand():
    matches = [Match(0.0, "a", "b", 1.0), Match(0.0, "a", "b", 1.0)]

    floored = vector.replay_sets(vector.rounds(matches), "tgr", [Params(luck_p=1.0)], rd_min=300.0)
    unfloored = vector.replay_sets(vector.rounds(matches), "tgr", [Params(luck_p=1.0)])

    assert floored[1, 0] == pytest.approx(_hand_rd_floor_second_prediction(300.0), abs=1e-12)
    assert unfloored[1, 0] > floored[1, 0]  # a smaller RD predicts more confidently
    # a floor below the RD after the game changes nothing
    low = vector.replay_sets(vector.rounds(matches), "tgr", [Params(luck_p=1.0)], rd_min=100.0)
    assert low[1, 0] == unfloored[1, 0]


def test_column_metrics_match_the_scalar_metrics(football):
    data = vector.rounds(football)
    probabilities = vector.replay_sets(data, "elo", SETS["elo"], score_from=1600)
    outcomes = data.score[1600:]

    for column, result in enumerate(vector.column_metrics(probabilities, outcomes)):
        expected = metrics(probabilities[:, column].tolist(), outcomes.tolist())
        assert result.n == expected.n
        for field in ("log_loss", "brier", "accuracy", "ece"):
            assert getattr(result, field) == pytest.approx(getattr(expected, field), abs=1e-12)


def test_glicko2_predictions_agree_to_its_volatility_solves_tolerance(football):
    sets = [
        Params(),
        Params(tau=0.3, period_days=7.0, initial_rd=250.0),
        Params(tau=1.0, period_days=30.0),
        Params(tau=0.6, period_days=30.0, rd_min=100.0),
    ]

    probabilities = vector.replay_sets(vector.rounds(football), "glicko2", sets, score_from=300)

    for column, params in enumerate(sets):
        scalar = replay_engine(football, "glicko2", params, score_from=300).probabilities
        assert np.abs(probabilities[:, column] - np.array(scalar)).max() <= 1e-6


def test_volatility_solve_reproduces_glickmans_example():
    # Glickman 2012's worked example: φ = 1.1513, σ = 0.06, Δ = −0.4834, v = 1.7785, τ = 0.5 → σ' = 0.05999
    solved = vector.volatility_solve(
        np.array([200.0 / 173.7178]), np.array([0.06]), np.array([-0.4834]), np.array([1.7785]), np.array([0.5])
    )
    assert solved[0] == pytest.approx(0.05999, abs=1e-5)


def test_replay_sets_refuses_an_engine_it_does_not_vectorise_and_plain_elo_elsewhere(football):
    with pytest.raises(ValueError, match="engine must be one of tgr, glicko1, glicko2, elo"):
        vector.replay_sets(vector.rounds(football), "trueskill", [Params()])
    with pytest.raises(ValueError, match="plain_elo predicts with Elo's own expectation"):
        vector.replay_sets(vector.rounds(football), "tgr", [Params()], plain_elo=True)


def test_tuner_vectorised_and_scalar_paths_agree(football):
    grids = {
        "tgr": {"sc": (2.5, 20.0), "luck_p": (0.9, 1.0)},
        "elo": {"k": (16.0, 32.0)},
        "glicko2": {"tau": (0.3, 1.0), "period_days": (1.0, 30.0)},
    }
    test_start = split_index(football)

    fast = tune(football, test_start, engines=tuple(grids), grids=grids, extend=0)
    slow = tune(football, test_start, engines=tuple(grids), grids=grids, extend=0, vectorised=False)

    assert [(t.engine, t.params) for t in fast] == [(t.engine, t.params) for t in slow]
    for f, s in zip(fast, slow, strict=True):
        assert f.validation.log_loss == pytest.approx(s.validation.log_loss, abs=1e-9)
        assert np.abs(np.array(f.probabilities) - np.array(s.probabilities)).max() <= 1e-9


def test_a_best_value_at_the_end_of_an_axis_extends_it():
    axes = {"k": [16.0, 24.0], "sc": [2.5, 5.0], "luck_p": [0.9, 1.0]}

    points = extended(axes, {"k": 24.0, "sc": 5.0, "luck_p": 1.0})

    assert axes["k"] == [16.0, 24.0, 36.0] and axes["sc"] == [2.5, 5.0, 10.0]
    assert axes["luck_p"] == [0.9, 1.0]  # bounded by docs/rules.md §4: never extended
    # a slab of the grid at k 36, another at SC 10 (its corner once), every P with each
    assert {(p["k"], p["sc"]) for p in points} == {(36.0, 2.5), (36.0, 5.0), (16.0, 10.0), (24.0, 10.0), (36.0, 10.0)}
    assert len(points) == 5 * 2 and len({tuple(p.values()) for p in points}) == len(points)
    # at a bound (initial RD 350 is the cap) and inside the grid: nothing new
    assert extended({"initial_rd": [250.0, 350.0]}, {"initial_rd": 350.0}) == []
    assert extended({"k": [16.0, 24.0, 32.0]}, {"k": 24.0}) == []


def test_tuner_follows_a_best_value_past_the_grid(football):
    test_start = split_index(football)

    tuned = tune(football, test_start, engines=("elo",), grids={"elo": {"k": (2.0,), "sc": (20.0,)}}, extend=2)

    assert tuned[0].params["k"] == pytest.approx(2.0 * 1.5**2)  # it walked up twice from a far too small K


def test_engines_import_no_numpy():
    code = "import sys, ratings.engines, ratings.backtest.replay; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# The first-named side's edge ----------------------------------------------------------------
EDGE_SETS = {"tgr": Params(sc=2.5, luck_p=0.9), "glicko1": Params(c=5.0), "elo": Params(k=48.0, sc=2.5)}


@pytest.mark.parametrize("engine", sorted(EDGE_SETS))
def test_an_edge_replays_as_the_scalar_engine_does(football, engine):
    params = EDGE_SETS[engine]
    edges = [70.0, -40.0, 0.0]

    probabilities = vector.replay_sets(vector.rounds(football), engine, [params] * 3, score_from=300, edges=edges)

    for column, edge in enumerate(edges):
        scalar = replay_engine(football, engine, params, score_from=300, edge=edge).probabilities
        assert np.abs(probabilities[:, column] - np.array(scalar)).max() <= 1e-9
    # an edge changes the predictions: it is not ignored
    assert np.abs(probabilities[:, 0] - probabilities[:, 2]).min() > 0


def test_glicko2_with_an_edge_agrees_to_its_solves_tolerance(football):
    params = Params(tau=1.0, period_days=30.0)

    probabilities = vector.replay_sets(vector.rounds(football), "glicko2", [params], score_from=300, edges=[55.0])

    scalar = replay_engine(football, "glicko2", params, score_from=300, edge=55.0).probabilities
    assert np.abs(probabilities[:, 0] - np.array(scalar)).max() <= 1e-6


@pytest.mark.parametrize("engine", ["tgr", "glicko2", "elo"])
def test_an_edge_for_a_is_an_edge_against_b_with_the_sides_swapped(football, engine):
    """Naming b first with the edge turned round predicts the same match: P' = 1 − P."""
    params = EDGE_SETS.get(engine, Params(tau=1.0, period_days=30.0))
    swapped = [Match(m.at, m.player_b, m.player_a, 1.0 - m.score_a) for m in football]

    forward = replay_engine(football, engine, params, edge=80.0).probabilities
    backward = replay_engine(swapped, engine, params, edge=-80.0).probabilities

    assert np.abs(np.array(forward) + np.array(backward) - 1.0).max() <= 1e-9


def test_an_edge_is_played_but_not_kept():
    """a plays its first game 100 points up, then has exactly the rating that game gave it."""
    engine = get_engine("glicko1", Params(c=5.0))
    day = 86_400.0
    matches = [Match(0.0, "a", "b", 1.0), Match(day, "b", "a", 0.5)]

    predictions = replay(matches, engine, edge=100.0).probabilities

    from ratings.engines import RatingState, win_probability

    fresh = RatingState(1500.0, 350.0, 0.06, 0.0)
    assert predictions[0] == pytest.approx(win_probability(1600.0, 350.0, 1500.0, 350.0), abs=1e-12)
    first = engine.rate(((fresh._replace(rating=1600.0),), (fresh,)), (1, 2), 0.0).sides
    a, b = first[0][0].after, first[1][0].after
    # in the second game b is named first and gets the edge; a's rating is its own, without it
    expected = win_probability(b.rating + 100.0, engine.rd_at(b, day), a.rating - 100.0, engine.rd_at(a, day))
    assert predictions[1] == pytest.approx(expected, abs=1e-12)


def _planted(edge: float, *, players: int = 120, count: int = 14_000, seed: int = 7) -> list[Match]:
    """Results of players of fixed strengths where the side named first plays ``edge`` points up."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(1500.0, 200.0, players)
    matches = []
    for index in range(count):
        a, b = rng.choice(players, 2, replace=False)
        p = 1.0 / (1.0 + 10.0 ** ((strength[b] - strength[a] - edge) / 400.0))
        matches.append(Match(float(index // 20) * 86_400.0, f"p{a}", f"p{b}", float(rng.random() < p)))
    return matches


@pytest.mark.parametrize(("planted", "low", "high"), [(0.0, 0.0, 0.0), (60.0, 35.0, 90.0), (-300.0, -400.0, -220.0)])
def test_the_tuner_finds_a_planted_edge(planted, low, high):
    """Even sides keep no edge (a noisy one is not kept: it must beat none by 2 paired SE)."""
    matches = _planted(planted)
    grids = {"tgr": {"sc": (2.5,), "luck_p": (1.0,), "initial_rd": (250.0,)}}

    tuned = tune(matches, split_index(matches), engines=("tgr",), grids=grids, extend=0, edge=True)

    assert low <= tuned[0].edge <= high
    without = tune(matches, split_index(matches), engines=("tgr",), grids=grids, extend=0)
    assert without[0].edge == 0.0  # searched only when asked (a ladder's sides have no order)
    if planted:  # the edge found predicts the validation slice better than none
        assert tuned[0].validation.log_loss < without[0].validation.log_loss
