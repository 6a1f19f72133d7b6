"""The engines' smaller public helpers, each against its formula written out again.

Win chances of whole games (``Engine.win_probability``), the inverse the queue's window
uses, the recalibration of a ladder's chances, the display values and their argument
errors, the written-back RD of the nightly job and the queue's clock rule. Expected values
come from docs/rules.md's formulas and Glickman's paper, not from the module under test.
"""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import pytest

from ratings.engines import ENGINES, Params, RatingState, display, get_engine
from ratings.engines.balance import ffa_unfairness, pair_win_probability, rating_gap_for_probability
from ratings.engines.base import Engine, pair_score
from ratings.engines.display import gxe
from ratings.engines.glicko import glicko2_rating_period
from ratings.engines.probability import (
    elo_expected_score,
    expected_score,
    rating_difference_for_probability,
    recalibrated,
    win_probability,
)
from ratings.engines.teams import composite, null_influence_bound, pad

DAY = 86_400.0
GLICKO_FAMILY = ["elo", "glicko1", "glicko2", "tgr"]
BETA = 10 ** (1 / 400)  # docs/rules.md §8
Q = math.log(10) / 400  # Glickman's q


def by_hand(team_a, team_b):
    """docs/rules.md §8 then §2 for two teams of ``(rating, RD now)`` already padded to one size."""
    sides = []
    for team in (team_a, team_b):
        total = sum(BETA**r for r, _ in team)
        sides.append(
            (math.log(total / len(team), BETA), math.sqrt(sum((BETA**r / total) ** 2 * d * d for r, d in team)))
        )
    (ra, rda), (rb, rdb) = sides
    big_g = 1 / math.sqrt(1 + 3 * Q * Q * (rda * rda + rdb * rdb) / math.pi**2)
    return 1 / (1 + 10 ** (-big_g * (ra - rb) / 400))


@pytest.mark.parametrize("name", GLICKO_FAMILY)
@pytest.mark.parametrize(("size_a", "size_b"), [(1, 1), (2, 2), (1, 3), (3, 2)])
def test_a_games_win_chance_pads_the_smaller_side_and_uses_the_rds_at_the_game(name, size_a, size_b):
    params = Params(null_rating=1200.0, null_rd=300.0)
    engine = get_engine(name, params)
    at = 30 * DAY
    ratings = iter([1620.0, 1480.0, 1555.0, 1700.0, 1390.0])
    side_a = [RatingState(next(ratings), 60.0 + 20 * i, 0.06, 10 * DAY * i) for i in range(size_a)]
    side_b = [RatingState(next(ratings), 90.0 + 15 * i, 0.06, 5 * DAY * i) for i in range(size_b)]
    size = max(size_a, size_b)
    teams = []
    for side in (side_a, side_b):
        members = [(member.rating, engine.rd_at(member, at)) for member in side]
        teams.append(members + [(1200.0, 300.0)] * (size - len(side)))

    assert engine.win_probability(side_a, side_b, at) == pytest.approx(by_hand(*teams), rel=1e-12)


def test_the_win_chance_of_two_players_is_docs_rules_2_with_grown_rds():
    engine = get_engine("tgr")
    a, b = RatingState(1700.0, 50.0, 0.06, 0.0), RatingState(1500.0, 80.0, 0.06, 0.0)

    chance = engine.win_probability([a], [b], 10 * DAY)

    assert chance == pytest.approx(
        by_hand([(1700.0, engine.rd_at(a, 10 * DAY))], [(1500.0, engine.rd_at(b, 10 * DAY))])
    )
    assert engine.rd_at(a, 10 * DAY) > 50.0  # the RDs grew: the chance is not the one at day 0
    assert chance < win_probability(1700.0, 50.0, 1500.0, 80.0)


def test_glickmans_example_expected_scores():
    """Glickman (1999), the example: a 1500 player against 1400/30, 1550/100 and 1700/300."""
    for rating, rd in ((1400, 30), (1550, 100), (1700, 300)):
        g = 1 / math.sqrt(1 + 3 * Q * Q * rd * rd / math.pi**2)
        assert expected_score(1500, rating, rd) == pytest.approx(
            1 / (1 + 10 ** (-g * (1500 - rating) / 400)), rel=1e-14
        )
    assert expected_score(1500, 1400, 30) == pytest.approx(0.639, abs=5e-4)
    assert expected_score(1500, 1550, 100) == pytest.approx(0.432, abs=5e-4)
    assert expected_score(1500, 1700, 300) == pytest.approx(0.303, abs=5e-4)


def test_elo_expects_ten_to_one_at_400_points():
    """docs/rules.md §7: E = 1/(1 + 10^((rb − ra)/400))."""
    assert elo_expected_score(1900, 1500) == pytest.approx(10 / 11, rel=1e-15)
    assert elo_expected_score(1500, 1900) == pytest.approx(1 / 11, rel=1e-15)
    assert elo_expected_score(1500, 1500) == 0.5


def test_pair_scores_of_a_free_for_all():
    """docs/rules.md §9: 1 for the better place, ½ for the same, 0 for the worse."""
    assert (pair_score(1, 2), pair_score(2, 2), pair_score(3, 2)) == (1.0, 0.5, 0.0)


@pytest.mark.parametrize("probability", [0.05, 0.3, 0.5, 0.77, 0.999])
@pytest.mark.parametrize("slope", [0.5, 0.8, 1.3, 2.0])
def test_recalibration_scales_the_log_odds(probability, slope):
    """docs/backtests.md: σ(slope·logit p)."""
    log_odds = math.log(probability / (1 - probability))

    assert recalibrated(probability, slope) == pytest.approx(1 / (1 + math.exp(-slope * log_odds)), rel=1e-14)
    assert recalibrated(1 - probability, slope) == pytest.approx(1 - recalibrated(probability, slope), abs=1e-15)


def test_recalibration_leaves_certainty_and_a_slope_of_one_alone():
    assert [recalibrated(p, 0.7) for p in (0.0, 1.0)] == [0.0, 1.0]
    assert recalibrated(0.8, 1.0) == 0.8
    assert recalibrated(0.8, 0.5) == pytest.approx(2 / 3)  # logit 0.8 = ln 4, halved: odds 2 to 1


@pytest.mark.parametrize("probability", [0.15, 0.5, 0.85])
@pytest.mark.parametrize(("rd_a", "rd_b"), [(50.0, 50.0), (80.0, 300.0)])
def test_the_windows_rating_gap_inverts_the_win_chance(probability, rd_a, rd_b):
    """docs/rules.md §13: the gap at which P(a beats b) is the window's edge, Glicko's or TrueSkill's."""
    gap = rating_difference_for_probability(probability, rd_a, rd_b)
    big_g = 1 / math.sqrt(1 + 3 * Q * Q * (rd_a * rd_a + rd_b * rd_b) / math.pi**2)

    assert gap == pytest.approx(400 / big_g * math.log10(probability / (1 - probability)), abs=1e-9)
    assert win_probability(1500.0 + gap, rd_a, 1500.0, rd_b) == pytest.approx(probability, rel=1e-12)
    assert rating_gap_for_probability(probability, rd_a, rd_b) == gap
    assert pair_win_probability((1500.0 + gap, rd_a), (1500.0, rd_b)) == pytest.approx(probability, rel=1e-12)


@pytest.mark.parametrize("probability", [0.0, 1.0, -0.1, 1.5, math.nan])
@pytest.mark.parametrize("beta", [None, 175.0])
def test_the_rating_gap_refuses_a_chance_outside_0_to_1(probability, beta):
    with pytest.raises(ValueError, match=r"^probability must be strictly between 0 and 1, got "):
        rating_gap_for_probability(probability, 50.0, 50.0, beta)


def test_the_rating_gap_takes_any_rd_above_0():
    assert rating_difference_for_probability(0.75, 0.5, 0.25) == pytest.approx(400 * math.log10(3), rel=1e-5)


@pytest.mark.parametrize("bad", [0.0, -5.0, math.inf, math.nan])
def test_the_rating_gap_refuses_an_rd_naming_it(bad):
    with pytest.raises(ValueError, match=rf"^rd_a must be a finite number above 0, got {bad!r}$"):
        rating_difference_for_probability(0.6, bad, 50.0)
    with pytest.raises(ValueError, match=rf"^rd_b must be a finite number above 0, got {bad!r}$"):
        rating_difference_for_probability(0.6, 50.0, bad)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((math.nan, 80.0, 100.0), r"^rating must be a finite number, got nan$"),
        ((1500.0, 0.0, 100.0), r"^rd must be above 0, got 0\.0$"),
        ((1500.0, -1.0, 100.0), r"^rd must be above 0, got -1\.0$"),
        ((1500.0, math.inf, 100.0), r"^rd must be a finite number, got inf$"),
        ((1500.0, 80.0, 0.0), r"^provisional_rd must be above 0, got 0\.0$"),
        ((1500.0, 80.0, "100"), r"^provisional_rd must be a number, got '100'$"),
    ],
)
def test_display_refuses_a_bad_value_naming_it(arguments, message):
    with pytest.raises(ValueError, match=message):
        display(*arguments)


@pytest.mark.parametrize(("rating", "rd"), [(1600.0, 80.0), (1234.5, 66.0), (2000.0, 150.0), (1501.0, 350.0)])
def test_gxe_is_the_glixare_chance_in_percent_to_two_decimals(rating, rd):
    """docs/rules.md §10: the chance to beat a 1500/350 player, in percent, rounded to 0.01."""
    x = (
        (rating - 1500)
        * math.pi
        / math.sqrt(3 * math.log(10) ** 2 * rd * rd + 2500 * (64 * math.pi**2 + 147 * math.log(10) ** 2))
    )
    percent = 100 / (1 + 10**-x)

    assert gxe(rating, rd) == round(percent, 2)
    assert display(rating, rd).gxe == round(percent, 2)


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_an_rd_written_back_night_after_night_is_materialize_in_turn(name):
    """docs/rules.md §1, §16: the nightly job's RD is the RD stored after each write-back in turn."""
    engine = get_engine(name, Params(tau=0.5))
    state = RatingState(1500.0, 60.0, 0.09, 3 * DAY)
    # Nights after the clock, one at the clock itself and two half a second apart.
    instants = [3 * DAY, 3 * DAY + 0.5, 3 * DAY + 1.0, 4 * DAY, 9.5 * DAY, 40 * DAY]

    expected = state
    for at in instants:
        expected = engine.materialize(expected, at)

    assert engine.rd_written_back(state, instants) == pytest.approx(expected.rd, rel=1e-13)
    assert Engine.rd_written_back(engine, state, instants) == expected.rd
    assert expected.rd > engine.rd_written_back(state, instants[:3]) > state.rd


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_an_rd_written_back_stops_at_the_cap(name):
    engine = get_engine(name, Params(rd_max=200.0))
    state = RatingState(1500.0, 190.0, 0.06, 0.0)

    assert engine.rd_written_back(state, [DAY * night for night in range(1, 400)]) == 200.0


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_searching_moves_a_clock_forward_never_back(name):
    """docs/rules.md §13: the queue's reset moves ``rd_as_of`` to now, keeping the stored RD."""
    engine = get_engine(name)
    state = RatingState(1500.0, 80.0, 0.06, 10 * DAY)

    assert engine.reset_clock(state, 12 * DAY) == state._replace(rd_as_of=12 * DAY)
    assert engine.reset_clock(state, 5 * DAY) == state
    assert engine.reset_clock(state, 10 * DAY) == state


def test_an_engine_shows_its_kind_and_constants():
    params = Params(sc=12.5)

    assert repr(get_engine("tgr", params)) == f"TimedGlicko({params!r})"


@pytest.mark.parametrize(("opponent", "score"), [(-60.0, 1.0), (60.0, 0.0)])
def test_a_glicko2_period_whose_results_were_certain_is_a_period_without_games(opponent, score):
    """Glickman (2012): a player who does not compete keeps μ and σ, and φ' = sqrt(φ² + σ²).

    An opponent 60 Glicko-2 units (some 10,000 points) away makes E round to exactly 0 or 1:
    the game carries no information, and the period must not divide by its zero variance.
    """
    mu, phi, sigma = glicko2_rating_period(0.0, 1.2, 0.06, [(opponent, 0.3, score)], 0.5)

    assert mu == pytest.approx(0.0, abs=1e-20)
    assert phi == math.sqrt(1.2**2 + 0.06**2)
    assert sigma == 0.06


@pytest.mark.parametrize(
    ("strongest", "nulls", "null_rating"), [(1800.0, 2, 1.0), (1600.0, 3, 1500.0), (900.0, 1, 1200.0)]
)
def test_the_null_players_influence_bound_is_docs_rules_8(strongest, nulls, null_rating):
    """``ln(1 + k·β^(R0 − Rmax)) / ln β``, written with β = 10^(1/400)."""
    expected = math.log(1 + nulls * BETA ** (null_rating - strongest), BETA)

    assert null_influence_bound(strongest, nulls, null_rating) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("score", [1.0, 0.5, 0.0])
@pytest.mark.parametrize("rd_min", [None, 81.0])
def test_a_trueskill_period_of_one_game_is_that_game(score, rd_min):
    """TrueSkill's ``rate_period`` with one opponent is exactly ``rate`` of that 1 v 1 game."""
    engine = get_engine("trueskill", Params(rd_min=rd_min))
    player, opponent = RatingState(1550.0, 80.0, 0.06, 0.0), RatingState(1480.0, 120.0, 0.06, 0.0)
    placements = {1.0: [1, 2], 0.5: [1, 1], 0.0: [2, 1]}[score]

    period = engine.rate_period(player, [(opponent, score)], DAY)
    game = engine.rate([[player], [opponent]], placements, DAY).sides[0][0]

    assert period == pytest.approx(game, rel=1e-12)
    if rd_min is not None:
        assert period.rd == rd_min  # the floor holds: one game takes an RD of 82.5 to about 80


def test_a_trueskill_period_averages_its_games_expectations_and_scores():
    engine = get_engine("trueskill")
    player = RatingState(1550.0, 80.0, 0.06, 0.0)
    games = [(RatingState(1480.0, 120.0, 0.06, 0.0), 1.0), (RatingState(1700.0, 60.0, 0.06, 0.0), 0.5)]
    singles = [engine.rate_period(player, [game], DAY) for game in games]

    period = engine.rate_period(player, games, DAY)

    assert period.expected == pytest.approx((singles[0].expected + singles[1].expected) / 2, rel=1e-12)
    assert period.score == 0.75


def test_a_trueskill_free_for_all_is_as_fair_as_its_most_lopsided_pair():
    """docs/rules.md §9, §20: the largest |Φ((μi − μj)/sqrt(2β² + σi² + σj²)) − ½| over the pairs."""
    players = [(1500.0, 80.0), (1650.0, 200.0), (1400.0, 50.0), (1480.0, 120.0)]
    pairs = itertools.combinations(players, 2)
    expected = max(
        abs(NormalDist().cdf((a - b) / math.sqrt(2 * 175.0**2 + da**2 + db**2)) - 0.5) for (a, da), (b, db) in pairs
    )

    assert ffa_unfairness(players, 175.0) == pytest.approx(expected, rel=1e-12)
    assert ffa_unfairness(players, 175.0) != pytest.approx(ffa_unfairness(players), rel=1e-3)


def test_a_free_for_all_refuses_a_bad_player_naming_them():
    with pytest.raises(ValueError, match=r"^members\[1\] rating must be a finite number, got nan$"):
        ffa_unfairness([(1500.0, 50.0), (math.nan, 50.0)])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: composite([], []), r"^team must have at least one player, got an empty team$"),
        (lambda: composite([1500.0, 1400.0], [50.0]), r"^rds must have one entry per rating: 2 ratings, 1 rds$"),
        (
            lambda: pad([1500.0, 1400.0], [50.0, 60.0], 1, null_rating=1.0, null_rd=350.0),
            r"^size must be at least the team's 2 players, got 1$",
        ),
    ],
)
def test_a_composite_of_a_bad_team_is_refused_saying_why(call, message):
    with pytest.raises(ValueError, match=message):
        call()
