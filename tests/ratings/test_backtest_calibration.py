"""Recalibration, the ``glicko2`` package baseline and games of every type in the backtest (issue 17)."""

from __future__ import annotations

import math
import random

import glicko2
import pytest

from ratings.backtest.calibration import IDENTITY, Calibration, fit
from ratings.backtest.data import Match
from ratings.backtest.games import EVEN_TEAMS, FREE_FOR_ALL, ONE_V_ONE, UNEVEN_TEAMS, Game, by_type, replay_games
from ratings.backtest.metrics import log_loss
from ratings.backtest.package import SCALE, glicko2_package
from ratings.backtest.replay import replay
from ratings.engines import Params, get_engine
from ratings.engines.balance import team_win_probability


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def sample(slope: float, intercept: float, n: int = 20_000, seed: int = 7) -> tuple[list[float], list[float]]:
    """Raw predictions whose true chance is ``σ(slope·logit p + intercept)``, and outcomes drawn from it."""
    rng = random.Random(seed)
    probabilities, outcomes = [], []
    for _ in range(n):
        x = rng.gauss(0.0, 1.5)
        probabilities.append(sigmoid(x))
        outcomes.append(1.0 if rng.random() < sigmoid(slope * x + intercept) else 0.0)
    return probabilities, outcomes


@pytest.mark.parametrize(("slope", "intercept"), [(0.8, 0.3), (1.3, -0.2), (0.5, 0.0)])
def test_fit_recovers_the_slope_and_intercept_the_outcomes_were_drawn_with(slope, intercept):
    probabilities, outcomes = sample(slope, intercept)

    fitted = fit(probabilities, outcomes)

    assert fitted.slope == pytest.approx(slope, abs=0.05)
    assert fitted.intercept == pytest.approx(intercept, abs=0.05)


def test_the_fit_is_the_minimum_of_the_log_loss():
    probabilities, outcomes = sample(0.8, 0.3, n=5_000)
    fitted = fit(probabilities, outcomes)

    def loss(calibration: Calibration) -> float:
        return log_loss(calibration.apply_all(probabilities), outcomes)

    best = loss(fitted)
    for da, db in [(0.01, 0), (-0.01, 0), (0, 0.01), (0, -0.01)]:
        assert best < loss(Calibration(fitted.slope + da, fitted.intercept + db))
    assert best < loss(IDENTITY)


def test_well_calibrated_predictions_are_left_almost_alone():
    fitted = fit(*sample(1.0, 0.0))

    assert fitted.slope == pytest.approx(1.0, abs=0.05) and fitted.intercept == pytest.approx(0.0, abs=0.05)


def test_a_draw_counts_half_and_a_slope_alone_keeps_the_intercept_at_zero():
    probabilities, outcomes = sample(0.7, 0.4, n=4_000)
    outcomes = [0.5 if index % 4 == 0 else y for index, y in enumerate(outcomes)]

    fitted = fit(probabilities, outcomes, intercept=False)

    assert fitted.intercept == 0.0 and 0.4 < fitted.slope < 1.0


def test_nothing_to_fit_gives_the_identity_and_lengths_must_agree():
    assert fit([0.3, 0.7, 0.6], [1.0, 1.0, 1.0]) == IDENTITY
    assert fit([0.6] * 10, [1.0, 0.0] * 5) == IDENTITY
    assert IDENTITY.apply(0.73) == pytest.approx(0.73)
    with pytest.raises(ValueError, match="outcomes must match probabilities: 2 predictions, got 1"):
        fit([0.5, 0.6], [1.0])


def test_the_package_baseline_predicts_with_glickmans_expectation_before_each_update():
    matches = [Match(0.0, "a", "b", 1.0), Match(1.0, "a", "c", 0.5), Match(2.0, "b", "a", 0.0)]

    predictions = glicko2_package(matches, score_from=1)

    # After game 1, both players come straight from the package, used as its README shows.
    a, b = glicko2.Player(), glicko2.Player()
    a.update_player([1500], [350], [1.0])
    b.update_player([1500], [350], [0.0])
    a.update_player([1500], [350], [0.5])  # game 2: a draws the new player c
    mu_b, mu_a, phi_a = (b.rating - 1500) / SCALE, (a.rating - 1500) / SCALE, a.rd / SCALE
    g = 1 / math.sqrt(1 + 3 * phi_a**2 / math.pi**2)
    assert len(predictions.probabilities) == 2 and predictions.outcomes == [0.5, 0.0]
    assert predictions.probabilities[1] == pytest.approx(1 / (1 + math.exp(-g * (mu_b - mu_a))), abs=1e-12)
    assert predictions.probabilities[1] < 0.5  # b lost game 1 to a


def test_one_v_one_games_replay_exactly_as_matches():
    rng = random.Random(3)
    matches = [Match(float(day * 86_400), *rng.sample("abcdef", 2), rng.choice([1.0, 0.5, 0.0])) for day in range(200)]
    places = {1.0: (1, 2), 0.5: (1, 1), 0.0: (2, 1)}
    games = [Game(m.at, ((m.player_a,), (m.player_b,)), places[m.score_a]) for m in matches]
    engine = get_engine("tgr", Params(sc=5.0))

    scored = replay_games(games, engine, score_from=150)
    expected = replay(matches, get_engine("tgr", Params(sc=5.0)), score_from=150)

    assert scored.predictions.probabilities == pytest.approx(expected.probabilities, abs=1e-12)
    assert scored.predictions.outcomes == expected.outcomes and set(scored.types) == {ONE_V_ONE}


def test_a_team_game_is_one_prediction_and_a_free_for_all_one_per_pair():
    params = Params()
    games = [
        Game(0.0, (("a",), ("b", "c")), (1, 2)),  # uneven 1 v 2, won by the lone player
        Game(86_400.0, (("a",), ("b",), ("c",), ("d",)), (2, 1, 2, 4)),
    ]

    scored = replay_games(games, get_engine("tgr", params))

    new = (1500.0, params.initial_rd)
    first = team_win_probability([new], [new, new], null_rating=params.null_rating, null_rd=params.null_player_rd)
    assert scored.types == [UNEVEN_TEAMS] + [FREE_FOR_ALL] * 6
    # the lone player's side is padded with a null player, so it is the underdog
    assert scored.predictions.probabilities[0] == pytest.approx(first, abs=1e-12) and first < 0.5
    # pairs (a,b) (a,c) (a,d) (b,c) (b,d) (c,d) from places 2, 1, 2, 4
    assert scored.predictions.outcomes == [1.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0]


def test_by_type_scores_the_last_fifth_of_every_type():
    rng = random.Random(5)
    games = []
    for day in range(100):
        names = rng.sample("abcdefgh", 4)
        shape = day % 3
        if shape == 0:
            games.append(Game(day * 86_400.0, ((names[0],), (names[1],)), (1, 2)))
        elif shape == 1:
            games.append(Game(day * 86_400.0, ((names[0], names[1]), (names[2], names[3])), (2, 1)))
        else:
            games.append(Game(day * 86_400.0, tuple((name,) for name in names[:3]), (1, 2, 3)))

    report = by_type(games, "glicko1", Params(c=10.0))

    assert set(report) == {ONE_V_ONE, EVEN_TEAMS, FREE_FOR_ALL}
    assert report[ONE_V_ONE]["n"] + report[EVEN_TEAMS]["n"] + report[FREE_FOR_ALL]["n"] / 3 == 20
