"""The TrueSkill engine against the seed's worked example and the PyPI ``trueskill`` package.

The package (0.4.5) is the oracle for every shape of game. Its default backend computes Φ
with a 1e-7 approximation of erfc, which moves its results by up to about 7e-6 TrueSkill
points from the exact ones, so the comparisons use its ``mpmath`` backend (exact Φ, φ and
Φ⁻¹), which the engine matches to about 1e-13. Everything is compared in TrueSkill units:
rating = 1500 + 42·(μ − 25), RD = 42·σ (docs/rules.md §20).

The games stay where the package's stopping rule is well conditioned: μ 10–40, σ up to 7.5,
draw probability 0.1 or 0.25 when a game has ties. With a narrow draw margin (p ≤ 0.05) and
σ near 15, a tie's ``sqrt|Δπ|`` in that rule is dominated by rounding in ``1 − w`` (about
1e-5 against the threshold 1e-4), so the package and the engine can stop a sweep apart and
differ by about 1e-6; run to convergence both reach the same fixed point to 1e-12.
"""

from __future__ import annotations

import math
import random
import struct
from itertools import chain
from statistics import NormalDist
from typing import Any

import mpmath
import pytest
import trueskill

import ratings.engines.trueskill as trueskill_engine
from ratings.engines.trueskill import (
    TRUESKILL_ORIGIN,
    TrueSkill,
    conservative,
    truncate_draw,
    truncate_win,
)
from ratings.engines.values import SECONDS_PER_DAY, TRUESKILL_MU, TRUESKILL_POINT, Params, RatingState

MU = TRUESKILL_MU
POINT = TRUESKILL_POINT
TOLERANCE = 1e-6  # TrueSkill points


def to_ladder(mu: float, sigma: float, days_idle: float = 0.0) -> RatingState:
    return RatingState(1500.0 + POINT * (mu - MU), POINT * sigma, 0.06, -days_idle * SECONDS_PER_DAY)


def to_trueskill(rating: float, rd: float) -> tuple[float, float]:
    return MU + (rating - 1500.0) / POINT, rd / POINT


def package(draw_probability: float) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(
        mu=MU, sigma=MU / 3, beta=MU / 6, tau=MU / 300, draw_probability=draw_probability, backend="mpmath"
    )


def engine(draw_probability: float = 0.1, **params: Any) -> TrueSkill:
    return TrueSkill(Params(draw_probability=draw_probability, **params))


# The seed's worked example ---------------------------------------------------------------
SEED_TABLE = [  # name, place, μ after, σ after (seed 004, "TrueSkill Scoring System")
    ("Alice", 1, 36.771, 5.749),
    ("Bob", 2, 32.242, 5.133),
    ("Chris", 3, 29.074, 4.943),
    ("Darren", 4, 26.322, 4.874),
    ("Eve", 5, 23.678, 4.874),
    ("Fabien", 6, 20.926, 4.943),
    ("George", 7, 17.758, 5.133),
    ("Hillary", 8, 13.229, 5.749),
]


def test_the_seeds_eight_newcomers_free_for_all():
    newcomer = RatingState(1500.0, 350.0, 0.06, 0.0)  # μ 25, σ 25/3

    result = TrueSkill().rate([[newcomer] for _ in SEED_TABLE], [place for _, place, _, _ in SEED_TABLE], 0.0)

    for (name, _, mu, sigma), (player,) in zip(SEED_TABLE, result.sides, strict=True):
        got_mu, got_sigma = to_trueskill(player.rating, player.rd)
        assert round(got_mu, 3) == mu, name
        if name in ("Darren", "Eve"):
            # σ is 4.874549…, which rounds to 4.875 (and the package prints 4.875); the seed
            # prints 4.874, the digits cut rather than rounded. True to the seed within 1e-3.
            assert got_sigma == pytest.approx(4.874549, abs=1e-6), name
            assert abs(got_sigma - sigma) < 1e-3, name
        else:
            assert round(got_sigma, 3) == sigma, name


# Random games against the package --------------------------------------------------------
def random_player(rng: random.Random) -> tuple[float, float, float]:
    """(μ, σ, idle days) in TrueSkill points; σ including idle growth stays below the cap."""
    return rng.uniform(10.0, 40.0), rng.uniform(0.5, 7.5), rng.choice([0.0, 0.0, rng.uniform(0.0, 60.0)])


def grown_sigma(sigma: float, days: float, sc: float) -> float:
    """σ after ``days`` idle, in TrueSkill points: σ² + SC²·days, capped at rd_max (350)."""
    return min(math.sqrt((POINT * sigma) ** 2 + sc * sc * days), 350.0) / POINT


def assert_matches_package(
    sizes: list[int], places: list[int], rng: random.Random, tolerance: float = TOLERANCE
) -> None:
    draw_probability = rng.choice([0.0, 0.1, 0.25]) if len(set(places)) == len(places) else rng.choice([0.1, 0.25])
    sc = rng.choice([0.0, 20.0])
    groups = [[random_player(rng) for _ in range(size)] for size in sizes]
    # The package keeps tied sides in the order given; the engine orders them by their μ sum
    # (so that a game's result never depends on how it lists its sides): hand them over so.
    order = sorted(range(len(groups)), key=lambda k: (places[k], sum(mu for mu, _, _ in groups[k])))
    try:
        rated = package(draw_probability).rate(
            [[trueskill.Rating(mu, grown_sigma(sigma, days, sc)) for mu, sigma, days in groups[k]] for k in order],
            ranks=[places[k] for k in order],
        )
    except FloatingPointError:  # the package gives up on some extreme upsets; nothing to compare
        return
    expected = [rated[order.index(k)] for k in range(len(groups))]

    result = engine(draw_probability, sc=sc).rate(
        [[to_ladder(mu, sigma, days) for mu, sigma, days in group] for group in groups], places, 0.0
    )

    for side, reference in zip(result.sides, expected, strict=True):
        for player, rating in zip(side, reference, strict=True):
            mu, sigma = to_trueskill(player.rating, player.rd)
            assert mu == pytest.approx(float(rating.mu), abs=tolerance), (sizes, places, groups)
            assert sigma == pytest.approx(float(rating.sigma), abs=tolerance), (sizes, places, groups)


@pytest.mark.parametrize(
    "sizes",
    [[1, 1], [2, 2], [3, 3], [4, 4], [1, 2], [2, 1], [1, 3], [2, 3], [3, 2], [1, 4], [3, 5]],
    ids=lambda sizes: " v ".join(map(str, sizes)),
)
def test_two_sides_match_the_package(sizes):
    rng = random.Random(f"two {sizes}")
    for places in ([1, 2], [2, 1], [1, 1]) * 20:
        assert_matches_package(sizes, list(places), rng)


@pytest.mark.parametrize("count", [3, 4, 5, 6, 7, 8])
def test_free_for_all_with_ties_matches_the_package(count):
    rng = random.Random(f"ffa {count}")
    for _ in range(40):
        sizes = [1] * count
        for _ in range(rng.randint(0, 8 - count)):  # some sides are teams, 8 players at most
            sizes[rng.randrange(count)] += 1
        places = [rng.randint(1, count) for _ in range(count)]  # ties are frequent
        assert_matches_package(sizes, places, rng)


@pytest.mark.parametrize("count", [3, 4, 5, 6])
def test_a_well_conditioned_free_for_all_stops_sweeping_where_the_package_does(count):
    # Away from the narrow draws of the module docstring, both measure each sweep's step alike
    # and stop after the same sweep: the results agree far inside the stopping tolerance.
    rng = random.Random(f"ffa {count}")
    for _ in range(15):
        sizes = [1] * count
        for _ in range(rng.randint(0, 8 - count)):
            sizes[rng.randrange(count)] += 1
        places = [rng.randint(1, count) for _ in range(count)]
        assert_matches_package(sizes, places, rng, tolerance=1e-10)


def test_a_free_for_all_of_upsets_matches_the_package_where_a_link_stops_teaching():
    # Upsets among far-apart sides: a link can teach a little in one sweep and nothing (w
    # rounds to 0) in the next, so a message left behind from the earlier sweep would show.
    players = [(-1891.0, 219.9), (210.2, 22.9), (4665.1, 166.1), (-1887.8, 185.0), (-1742.2, 99.7), (2389.1, 27.1)]
    players.append((199.9, 297.0))
    places = [7, 6, 2, 7, 7, 1, 6]
    order = sorted(range(len(players)), key=lambda k: (places[k], players[k][0]))
    rated = package(0.25).rate(
        [[trueskill.Rating(*to_trueskill(*players[k]))] for k in order], ranks=[places[k] for k in order]
    )

    result = engine(0.25).rate([[RatingState(rating, rd)] for rating, rd in players], places, 0.0)

    for position, k in enumerate(order):
        mu, sigma = to_trueskill(result.sides[k][0].rating, result.sides[k][0].rd)
        assert mu == pytest.approx(float(rated[position][0].mu), abs=1e-10)
        assert sigma == pytest.approx(float(rated[position][0].sigma), abs=1e-10)


def test_wide_games_with_narrow_draws_follow_the_packages_schedule_sweep_for_sweep(monkeypatch):
    """Where the stopping rule is ill-conditioned (module docstring), a tight rule on both sides."""
    monkeypatch.setattr(trueskill_engine, "MIN_DELTA", 1e-12 / POINT)
    rng = random.Random("wide")
    for _ in range(60):
        count = rng.randint(3, 8)
        groups = [[(rng.uniform(0.0, 60.0), rng.uniform(0.1, 15.0))] for _ in range(count)]
        places = [rng.randint(1, count) for _ in range(count)]
        draw_probability = rng.choice([0.05, 0.1, 0.3])
        order = sorted(range(count), key=lambda k: (places[k], groups[k][0][0]))
        try:
            rated = package(draw_probability).rate(
                [[trueskill.Rating(*groups[k][0])] for k in order], ranks=[places[k] for k in order], min_delta=1e-12
            )
        except FloatingPointError:
            continue
        ts = engine(draw_probability, sc=0.0, rd_max=1e6)

        result = ts.rate([[to_ladder(*group[0])] for group in groups], places, 0.0)

        for position, k in enumerate(order):
            mu, sigma = to_trueskill(result.sides[k][0].rating, result.sides[k][0].rd)
            assert mu == pytest.approx(float(rated[position][0].mu), abs=1e-9)
            assert sigma == pytest.approx(float(rated[position][0].sigma), abs=1e-9)


def test_each_game_takes_as_many_sweeps_as_the_packages_schedule(monkeypatch):
    """The chain stops on the sweep the package's ``run_schedule`` stops on, counted as truncations:
    the package's ``TruncateFactor.up``, the engine's ``truncate_win`` and ``truncate_draw``. A game beyond doubt stops after its first sweep, when every message moved
    less than the threshold from where the schedule starts them: at nothing."""
    counted = {"engine": 0, "package": 0}

    def counting(name, function):
        def count(*args):
            counted[name] += 1
            return function(*args)

        return count

    def win(t: float, eps: float) -> tuple[float, float]:  # the games here stay far from the tail
        x = t - eps
        v = NormalDist().pdf(x) / NormalDist().cdf(x)
        return v, v * (v + x)

    # The engine inlines a win's moments outside the far tail; with the tail moved to +∞ every
    # win goes through truncate_win, here computed without the module's tail threshold.
    monkeypatch.setattr(trueskill_engine, "_MILLS_FROM", math.inf)
    monkeypatch.setattr(trueskill_engine, "truncate_win", counting("engine", win))
    monkeypatch.setattr(trueskill_engine, "truncate_draw", counting("engine", truncate_draw))
    monkeypatch.setattr(trueskill.TruncateFactor, "up", counting("package", trueskill.TruncateFactor.up))
    rng = random.Random("sweeps")
    one_sweep = 0
    for game in range(120):
        count = rng.randint(3, 6)
        if game % 2:  # in rating order, far apart: beyond doubt
            top, gap = rng.uniform(200.0, 250.0), rng.uniform(40.0, 50.0)
            players = [(top - gap * k, rng.uniform(0.3, 1.5)) for k in range(count)]
            places = list(range(1, count + 1))
        else:
            players = [(rng.uniform(15.0, 35.0), rng.uniform(1.0, 7.5)) for _ in range(count)]
            places = [rng.randint(1, count) for _ in range(count)]
        order = sorted(range(count), key=lambda k: (places[k], players[k][0]))
        counted.update(engine=0, package=0)
        package(0.1).rate([[trueskill.Rating(*players[k])] for k in order], ranks=[places[k] for k in order])
        engine(0.1, sc=0.0).rate([[to_ladder(*player)] for player in players], places, 0.0)

        assert counted["engine"] == counted["package"], (players, places, counted)
        one_sweep += counted["package"] == 2 * (count - 2)  # links − 1 forward, as many back
    assert one_sweep >= 30  # the beyond-doubt games stop after one sweep in both


def test_a_free_for_all_in_any_input_order_rates_each_side_the_same():
    rng = random.Random("order")
    sides = [[to_ladder(*random_player(rng))] for _ in range(5)]
    places = [3, 1, 3, 2, 3]  # three sides tied: the chain orders them by rating, not by listing
    straight = TrueSkill().rate(sides, places, 0.0)
    order = [1, 3, 0, 4, 2]

    shuffled = TrueSkill().rate([sides[k] for k in order], [places[k] for k in order], 0.0)

    for position, k in enumerate(order):
        assert shuffled.sides[position][0].rating == pytest.approx(straight.sides[k][0].rating, abs=1e-9)
        assert shuffled.sides[position][0].rd == pytest.approx(straight.sides[k][0].rd, abs=1e-9)


def test_a_rating_period_of_one_game_is_that_game_and_more_games_add_their_information():
    a, b, c = to_ladder(27, 5, 3), to_ladder(24, 2), to_ladder(31, 7)
    ts = engine(sc=20.0)
    for score, places in ((1.0, [1, 2]), (0.5, [1, 1]), (0.0, [2, 1])):
        period = ts.rate_period(a, [(b, score)], 0.0)
        game = ts.rate([[a], [b]], places, 0.0).sides[0][0]
        for p, q in zip(period, game, strict=True):
            assert p == pytest.approx(q, rel=1e-12, abs=1e-12)
    # Two games from the same prior: each game's precision gain adds up (Gaussian messages).
    one = ts.rate_period(a, [(b, 1.0)], 0.0)
    two = ts.rate_period(a, [(c, 0.0)], 0.0)
    both = ts.rate_period(a, [(b, 1.0), (c, 0.0)], 0.0)
    prior = one.rd_at_game**2 + 3.5**2
    gain = 1 / one.rd**2 - 1 / prior + 1 / two.rd**2 - 1 / prior
    assert 1 / both.rd**2 == pytest.approx(1 / prior + gain, rel=1e-12)
    assert both.delta * (1 / both.rd**2) == pytest.approx(one.delta / one.rd**2 + two.delta / two.rd**2, rel=1e-12)


def test_the_truncation_moments_match_the_packages_v_and_w():
    env = package(0.1)
    for t in (-6.0, -2.5, -0.3, 0.0, 0.4, 1.7, 5.0):
        for eps in (0.0, 0.05, 0.7):
            v, w = truncate_win(t, eps)
            assert v == pytest.approx(float(env.v_win(t, eps)), rel=1e-12)
            assert w == pytest.approx(float(env.w_win(t, eps)), rel=1e-9)
            if eps > 0.0:
                v, w = truncate_draw(t, eps)
                assert v == pytest.approx(float(env.v_draw(t, eps)), rel=1e-9, abs=1e-15)
                assert w == pytest.approx(float(env.w_draw(t, eps)), rel=1e-9)


def exact_truncation(t: float, eps: float, draw: bool) -> tuple[mpmath.mpf, mpmath.mpf]:
    """v and w of Herbrich et al. (2007, eq. 6–7) from their definitions, at 50 digits."""
    with mpmath.workdps(50):
        t, eps = mpmath.mpf(t), mpmath.mpf(eps)
        if not draw:
            x = t - eps
            v = mpmath.npdf(x) / mpmath.ncdf(x)
            return v, v * (v + x)
        a, b = eps - abs(t), -eps - abs(t)
        mass = mpmath.ncdf(a) - mpmath.ncdf(b)
        v = (mpmath.npdf(b) - mpmath.npdf(a)) / mass
        w = v * v + (a * mpmath.npdf(a) - b * mpmath.npdf(b)) / mass
        return (-v if t < 0 else v), w


@pytest.mark.parametrize("t", [-30.5, -35.0, -40.0, -100.0])
def test_an_upset_beyond_30_spreads_has_the_exact_truncation_moments(t):
    v, w = truncate_win(t, 0.0)
    exact_v, exact_w = exact_truncation(t, 0.0, draw=False)
    assert v == pytest.approx(float(exact_v), rel=1e-13)
    assert 1.0 - w == pytest.approx(float(1 - exact_w), rel=1e-8)


@pytest.mark.parametrize(
    ("t", "eps", "rel_v", "rel_keep"),
    [
        # Where Φ(a) − Φ(b) underflows, the draw is the exponential tail at a: v = a + 1/a to
        # O(1/a³); 1 − w is 1/a² for a wide margin, ε²/3 (a uniform's variance) for a narrow one.
        (40.0, 1.0, 1e-5, 1e-2),
        (-45.0, 0.7, 1e-5, 1e-2),
        (50.0, 0.5, 1e-5, 1e-2),
        (40.0, 1e-3, 1e-3, 1e-3),
        (-60.0, 1e-3, 1e-3, 1e-3),
    ],
)
def test_a_draw_beyond_37_spreads_has_the_truncation_moments_of_its_tail(t, eps, rel_v, rel_keep):
    v, w = truncate_draw(t, eps)
    exact_v, exact_w = exact_truncation(t, eps, draw=True)
    assert v == pytest.approx(float(exact_v), rel=rel_v)
    assert 1.0 - w == pytest.approx(float(1 - exact_w), rel=rel_keep)


@pytest.mark.parametrize(
    ("moments", "t", "eps"),
    [
        (truncate_win, 40.0, 0.0),  # φ(x) underflows: w rounds to 0
        (truncate_win, -1e6, 0.0),  # v(v + x) rounds to 1 or above
        (truncate_draw, 0.0, 40.0),  # a tie margin of 40 spreads: w rounds to 0
        (truncate_draw, 1e9, 1.0),  # 1 − 1/a² rounds to 1
    ],
)
def test_w_stays_strictly_between_0_and_1_where_it_rounds_to_an_end(moments, t, eps):
    # w is the variance a truncation takes away, as a share: never all of it, never none.
    _, w = moments(t, eps)
    _, exact_w = exact_truncation(t, eps, draw=moments is truncate_draw)
    assert 0.0 < w < 1.0
    assert w == pytest.approx(float(exact_w), abs=1e-12)


def test_extreme_upsets_and_a_tie_without_draws_give_finite_results():
    strong = RatingState(50_000.0, 1.0, 0.06, 0.0)
    weak = RatingState(-50_000.0, 1.0, 0.06, 0.0)
    for draw_probability in (0.0, 0.1):
        ts = engine(draw_probability)
        for sides, places in (
            ([[weak], [strong]], [1, 2]),
            ([[weak], [strong]], [1, 1]),
            ([[weak, weak], [strong, strong]], [1, 2]),
            ([[weak, strong], [strong], [weak]], [3, 1, 1]),
            ([[weak], [strong], [weak], [strong]], [1, 2, 2, 4]),
            # Results beyond doubt: w rounds to 0, a truncation that teaches nothing.
            ([[strong], [weak], [weak]], [1, 2, 3]),
            ([[strong], [strong], [weak]], [1, 1, 2]),
            ([[RatingState(5000.0, 1.0)], [RatingState(0.0, 1.0)], [RatingState(0.0, 1.0)]], [1, 2, 2]),
        ):
            result = ts.rate(sides, places, 0.0)
            values = [value for side in result.sides for player in side for value in player]
            assert all(math.isfinite(value) for value in values), (sides, places)
            assert all(player.rd > 0.0 for side in result.sides for player in side)
    # The upset's winner gains and its loser drops, however unlikely the result was.
    result = TrueSkill().rate([[weak], [strong]], [1, 2], 0.0)
    assert result.sides[0][0].delta > 0.0 > result.sides[1][0].delta


# Probabilities ---------------------------------------------------------------------------
def documented_win_probability(team_a: list[trueskill.Rating], team_b: list[trueskill.Rating]) -> float:
    """The package documentation's "Win probability" recipe, in TrueSkill units (β = 25/6)."""
    delta_mu = sum(r.mu for r in team_a) - sum(r.mu for r in team_b)
    sum_sigma = sum(r.sigma**2 for r in chain(team_a, team_b))
    size = len(team_a) + len(team_b)
    return NormalDist().cdf(delta_mu / math.sqrt(size * (MU / 6) ** 2 + sum_sigma))


@pytest.mark.parametrize("sizes", [(1, 1), (2, 2), (1, 2), (3, 1), (4, 4)])
def test_win_probability_is_the_packages_documented_formula(sizes):
    rng = random.Random(f"win {sizes}")
    ts = engine(sc=20.0)
    for _ in range(30):
        teams = [[random_player(rng) for _ in range(size)] for size in sizes]
        at_sides = [[to_ladder(mu, sigma, days) for mu, sigma, days in team] for team in teams]
        reference = documented_win_probability(
            *[[trueskill.Rating(mu, grown_sigma(sigma, days, 20.0)) for mu, sigma, days in team] for team in teams]
        )

        forward = ts.win_probability(at_sides[0], at_sides[1], 0.0)
        backward = ts.win_probability(at_sides[1], at_sides[0], 0.0)

        assert forward == pytest.approx(reference, abs=1e-12)
        assert forward + backward == pytest.approx(1.0, abs=1e-15)


def test_equal_sides_are_even_and_a_newcomer_pair_outplays_one_newcomer():
    newcomer = RatingState(1500.0, 350.0)
    ts = TrueSkill()

    assert ts.win_probability([newcomer], [newcomer], 0.0) == 0.5
    # A team performs at the sum of its members' performances, counted from TrueSkill's μ = 0.
    pair = ts.win_probability([newcomer, newcomer], [newcomer], 0.0)
    assert pair == pytest.approx(NormalDist().cdf(25 / math.sqrt(3 * (25 / 6) ** 2 + 3 * (25 / 3) ** 2)), abs=1e-15)
    assert TRUESKILL_ORIGIN == 450.0


def test_first_place_probabilities_sum_to_one_and_match_two_sides_and_an_independent_integral():
    rng = random.Random("first")
    ts = TrueSkill()
    for count in range(2, 9):
        for _ in range(5):
            sizes = [1] * count
            for _ in range(rng.randint(0, 8 - count)):
                sizes[rng.randrange(count)] += 1
            sides = [[to_ladder(*random_player(rng)) for _ in range(size)] for size in sizes]

            chances = ts.first_place_probabilities(sides, 0.0)

            assert len(chances) == count and all(0.0 <= p <= 1.0 for p in chances)
            assert sum(chances) == pytest.approx(1.0, abs=1e-9)
            if count == 2:
                assert chances[0] == pytest.approx(ts.win_probability(sides[0], sides[1], 0.0), abs=1e-12)
    # An independent integral (mpmath's adaptive quadrature) for four sides of one and two.
    sides = [[to_ladder(30, 4)], [to_ladder(25, 8)], [to_ladder(12, 2), to_ladder(15, 6)], [to_ladder(20, 1)]]
    teams = []
    for side in sides:
        mean = sum(player.rating - TRUESKILL_ORIGIN for player in side)
        teams.append((mean, math.sqrt(sum(player.rd**2 for player in side) + len(side) * 175.0**2)))
    chances = ts.first_place_probabilities(sides, 0.0)
    for index, (mean, spread) in enumerate(teams):
        others = [team for k, team in enumerate(teams) if k != index]

        def integrand(x, mean=mean, spread=spread, others=others):
            value = mpmath.npdf(x, mean, spread)
            for other_mean, other_spread in others:
                value *= mpmath.ncdf(x, other_mean, other_spread)
            return value

        reference = mpmath.quad(integrand, [mean - 12 * spread, mean, mean + 12 * spread])
        assert chances[index] == pytest.approx(float(reference), abs=1e-12)
    # Three equal sides: a third each.
    newcomer = RatingState(1500.0, 350.0)
    assert ts.first_place_probabilities([[newcomer]] * 3, 0.0) == pytest.approx((1 / 3,) * 3, abs=1e-12)


def test_first_place_probabilities_stay_bounded_work_for_absurd_spreads():
    """A side 350,000 times as spread as another: the step is capped, the answer still close."""
    sides = [[RatingState(1500.0, 0.001)]] + [[RatingState(1500.0 + k, 350.0)] for k in range(7)]

    chances = engine(beta=0.001).first_place_probabilities(sides, 0.0)

    assert sum(chances) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize(
    "sizes", [(1, 1), (2, 2), (1, 2), (3, 3), (1, 1, 1), (2, 1, 3), (1, 2, 1), (2, 3, 2, 1), (1, 1, 1, 1, 1, 1, 1, 1)]
)
def test_match_quality_is_the_packages_quality(sizes):
    rng = random.Random(f"quality {sizes}")
    ts = engine(sc=20.0)
    env = package(0.1)
    for _ in range(20):
        teams = [[random_player(rng) for _ in range(size)] for size in sizes]
        sides = [[to_ladder(mu, sigma, days) for mu, sigma, days in team] for team in teams]
        reference = env.quality(
            [[trueskill.Rating(mu, grown_sigma(sigma, days, 20.0)) for mu, sigma, days in team] for team in teams]
        )

        assert ts.match_quality(sides, 0.0) == pytest.approx(float(reference), rel=1e-9)


def test_match_quality_of_two_players_is_the_seeds_formula():
    a, b = to_ladder(28.0, 3.0), to_ladder(22.0, 6.0)
    c2 = 2 * (25 / 6) ** 2 + 3.0**2 + 6.0**2  # the seed writes μ² for σ² here, a typo

    quality = TrueSkill().match_quality([[a], [b]], 0.0)

    assert quality == pytest.approx(math.exp(-((28.0 - 22.0) ** 2) / (2 * c2)) * math.sqrt(2 * (25 / 6) ** 2 / c2))


def test_conservative_rating_is_mu_minus_three_sigma_and_zero_for_a_newcomer_on_the_seeds_scale():
    assert conservative(RatingState(1500.0, 350.0)) == TRUESKILL_ORIGIN  # the seed's R = 25 − 3·25/3 = 0
    assert conservative(RatingState(1800.0, 100.0), k=2.0) == 1600.0


# The game's bookkeeping ------------------------------------------------------------------
def test_expected_score_composites_and_clock_of_a_team_game():
    a = [RatingState(1600.0, 100.0, 0.06, 0.0), RatingState(1400.0, 200.0, 0.07, 0.0)]
    b = [RatingState(1500.0, 150.0, 0.06, 0.0), RatingState(1550.0, 50.0, 0.06, 500.0)]
    ts = engine(sc=0.0)  # no idle growth in the 100 s before the game

    result = ts.rate([a, b], [2, 1], 100.0)

    (a1, a2), (b1, b2) = result.sides
    assert a1.score == a2.score == 0.0 and b1.score == b2.score == 1.0
    assert a1.expected + b1.expected == pytest.approx(1.0, abs=1e-15)
    tau2 = 3.5**2
    c = math.sqrt(100.0**2 + 200.0**2 + 150.0**2 + 50.0**2 + 4 * tau2 + 4 * 175.0**2)
    assert a1.expected == pytest.approx(NormalDist().cdf((3000.0 - 3050.0) / c), abs=1e-15)
    # Each side: its members' mean rating and the standard deviation of that mean.
    composites = [value for composite in result.composites for value in composite]
    assert composites == pytest.approx(
        [1500.0, math.sqrt(100.0**2 + 200.0**2) / 2, 1525.0, math.sqrt(150.0**2 + 50.0**2) / 2]
    )
    assert [p.rd_at_game for p in (a1, a2, b1, b2)] == [100.0, 200.0, 150.0, 50.0]  # σ before τ
    assert [p.rd_as_of for p in (a1, a2, b1, b2)] == [100.0, 100.0, 100.0, 500.0]  # no clock moves back
    assert a2.volatility == 0.07
    for player, before in zip((a1, a2, b1, b2), chain(a, b), strict=True):
        assert player.rating == before.rating + player.delta


def test_a_free_for_all_scores_each_side_against_every_other():
    players = [[RatingState(1500.0 + 50 * k, 200.0)] for k in range(4)]

    result = TrueSkill().rate(players, [1, 2, 2, 4], 0.0)

    assert [side[0].score for side in result.sides] == [1.0, 0.5, 0.5, 0.0]
    assert sum(side[0].expected for side in result.sides) == pytest.approx(2.0, abs=1e-12)  # 4·(3 pairs ½)


def test_a_team_games_scores_are_1_and_0_for_a_win_and_half_each_for_a_draw():
    a = [RatingState(1600.0, 100.0), RatingState(1400.0, 200.0)]
    b = [RatingState(1500.0, 150.0)]
    for places, scores in (([1, 2], (1.0, 0.0)), ([2, 1], (0.0, 1.0)), ([1, 1], (0.5, 0.5))):
        result = TrueSkill().rate([a, b], places, 0.0)
        assert [{player.score for player in side} for side in result.sides] == [{scores[0]}, {scores[1]}]


def test_a_team_game_grows_sigma_for_even_half_a_second_idle():
    half_a_second = 0.5
    a = [RatingState(1600.0, 100.0), RatingState(1400.0, 200.0)]
    b = [RatingState(1500.0, 150.0)]

    result = engine(sc=20.0).rate([a, b], [1, 2], half_a_second)

    grown = [player.rd_at_game for side in result.sides for player in side]
    assert grown == pytest.approx(
        [math.sqrt(rd**2 + 400.0 * half_a_second / SECONDS_PER_DAY) for rd in (100.0, 200.0, 150.0)], rel=1e-15
    )
    assert grown[0] > 100.0


def test_each_side_of_a_free_for_all_expects_its_pairings_and_has_its_composite():
    sides = [
        [RatingState(1600.0, 100.0), RatingState(1400.0, 200.0)],
        [RatingState(1500.0, 150.0), RatingState(1560.0, 50.0)],
        [RatingState(1450.0, 120.0), RatingState(1480.0, 80.0)],
    ]

    result = TrueSkill().rate(sides, [2, 1, 3], 0.0)

    # E: the mean over the other sides of P(this side's performance beats theirs), each side
    # performing at N(Σ(μ − origin), Σ(σ² + τ² + β²)) as in a game of two sides.
    spread = [sum(member.rd**2 + 3.5**2 + 175.0**2 for member in side) for side in sides]
    total = [sum(member.rating for member in side) for side in sides]
    for index, side in enumerate(result.sides):
        chances = [
            NormalDist().cdf((total[index] - total[other]) / math.sqrt(spread[index] + spread[other]))
            for other in range(3)
            if other != index
        ]
        assert [player.expected for player in side] == pytest.approx([sum(chances) / 2] * 2, abs=1e-15)
    # Each side: its members' mean rating and the standard deviation of that mean.
    assert [value for composite in result.composites for value in composite] == pytest.approx(
        [
            1500.0,
            math.sqrt(100.0**2 + 200.0**2) / 2,
            1530.0,
            math.sqrt(150.0**2 + 50.0**2) / 2,
            1465.0,
            math.sqrt(120.0**2 + 80.0**2) / 2,
        ],
        rel=1e-12,
    )


def test_a_free_for_all_whose_every_result_was_beyond_doubt_teaches_nothing():
    # Each side beats the next by 50,000 points, 280 spreads: the prior gave this order
    # probability 1, so the posterior is the prior; only τ is added.
    sides = [[RatingState(50_000.0 * (1 - k), 40.0)] for k in range(4)]

    result = TrueSkill().rate(sides, [1, 2, 3, 4], 0.0)

    for side in result.sides:
        assert side[0].delta == 0.0
        assert side[0].rd == pytest.approx(math.sqrt(40.0**2 + 3.5**2), rel=1e-15)


def test_a_result_beyond_doubt_splits_a_free_for_all_into_independent_games():
    # C beats D by 50,000 points: that link teaches nothing, so the teams above it are rated
    # as in a game of their own, and so are the teams below it.
    top = [[RatingState(1500.0, 100.0)], [RatingState(1520.0, 120.0)], [RatingState(1480.0, 90.0)]]
    bottom = [[RatingState(-50_000.0, 100.0)], [RatingState(-50_010.0, 80.0)]]
    ts = TrueSkill()

    whole = ts.rate(top + bottom, [1, 2, 3, 4, 5], 0.0)
    apart = ts.rate(top, [1, 2, 3], 0.0).sides + ts.rate(bottom, [1, 2], 0.0).sides

    for together, alone in zip(whole.sides, apart, strict=True):
        assert together[0].delta == pytest.approx(alone[0].delta, rel=1e-6)
        assert together[0].rd == pytest.approx(alone[0].rd, rel=1e-9)


# Idle growth and the floor ---------------------------------------------------------------
def test_sigma_grows_with_idle_time_by_sc_and_stops_at_rd_max():
    state = RatingState(1500.0, 100.0, 0.06, 0.0)
    ts = engine(sc=20.0)

    assert ts.growth_per_second == 400.0 / SECONDS_PER_DAY
    assert ts.rd_at(state, 10 * SECONDS_PER_DAY) == pytest.approx(math.sqrt(100.0**2 + 10 * 400.0))
    assert ts.rd_at(state, 10_000 * SECONDS_PER_DAY) == 350.0
    assert engine(sc=20.0, rd_max=200.0).rd_at(state, 10_000 * SECONDS_PER_DAY) == 200.0
    # The game starts from the grown σ, then adds τ.
    result = ts.rate([[state], [RatingState(1500.0, 100.0, 0.06, 10 * SECONDS_PER_DAY)]], [1, 2], 10 * SECONDS_PER_DAY)
    assert result.sides[0][0].rd_at_game == pytest.approx(math.sqrt(100.0**2 + 10 * 400.0))
    assert result.sides[1][0].rd_at_game == 100.0


def test_sc_zero_keeps_sigma_while_idle():
    state = RatingState(1500.0, 100.0, 0.06, 0.0)
    ts = engine(sc=0.0)

    assert ts.growth_per_second == 0.0
    assert ts.rd_at(state, 1e9) == 100.0
    assert ts.rd_written_back(state, [1e6, 2e6, 3e6]) == 100.0
    idle = ts.rate([[state], [state]], [1, 2], 1e9)
    fresh = ts.rate([[state], [state]], [1, 2], 0.0)
    assert [p[0].rating for p in idle.sides] == [p[0].rating for p in fresh.sides]
    assert [p[0].rd for p in idle.sides] == [p[0].rd for p in fresh.sides]


@pytest.mark.parametrize(("sides", "places"), [(1, [1, 2]), (2, [1, 2]), (3, [2, 1, 3])])
def test_the_rd_floor_stops_sigma_not_mu(sides, places):
    rng = random.Random(f"floor {sides}")
    teams = [[RatingState(rng.uniform(1400, 1600), 40.0) for _ in range(2 if sides == 2 else 1)] for _ in places]
    plain = engine().rate(teams, places, 0.0)
    floored = engine(rd_min=45.0).rate(teams, places, 0.0)

    for plain_side, floored_side in zip(plain.sides, floored.sides, strict=True):
        for before, after in zip(plain_side, floored_side, strict=True):
            assert before.rd < 45.0 and after.rd == 45.0
            assert after.delta == before.delta


# Input and replays -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sides", "places", "field"),
    [
        ([[RatingState(1500.0, 350.0)]], [1], "sides must hold at least 2 sides"),
        ([[RatingState(1500.0, 350.0)], []], [1, 2], "sides[1]"),
        ([[RatingState(math.nan, 350.0)], [RatingState(1500.0, 350.0)]], [1, 2], "sides[0][0].rating"),
        ([[RatingState(1500.0, 0.0)], [RatingState(1500.0, 350.0)]], [1, 2], "sides[0][0].rd"),
        ([[RatingState(1500.0, 350.0)], [RatingState(1500.0, 350.0)]], [1], "placements"),
        ([[RatingState(1500.0, 350.0)], [RatingState(1500.0, 350.0)]], [1, 0], "placements[1]"),
        ([[RatingState(1500.0, 350.0)] * 5, [RatingState(1500.0, 350.0)] * 4], [1, 2], "at most 8 players"),
    ],
)
def test_bad_input_raises_value_error_naming_the_field(sides, places, field):
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        TrueSkill().rate(sides, places, 0.0)


def test_bad_parameters_and_sides_for_the_probabilities_raise_value_error():
    with pytest.raises(ValueError, match="draw_probability"):
        Params(draw_probability=1.0)
    with pytest.raises(ValueError, match="beta"):
        Params(beta=0.0)
    newcomer = RatingState(1500.0, 350.0)
    with pytest.raises(ValueError, match=r"sides\[1\]"):
        TrueSkill().win_probability([newcomer], [], 0.0)
    with pytest.raises(ValueError, match="at least 2 sides"):
        TrueSkill().first_place_probabilities([[newcomer]], 0.0)
    with pytest.raises(ValueError, match="at least 2 sides"):
        TrueSkill().match_quality([[newcomer]], 0.0)


def bits(result) -> bytes:
    return b"".join(struct.pack("<d", value) for side in result.sides for player in side for value in player)


def test_a_replay_is_bit_identical():
    def season(ts: TrueSkill) -> list[bytes]:
        rng = random.Random("replay")
        players = [RatingState(1500.0, 350.0, 0.06, 0.0) for _ in range(12)]
        out = []
        at = 0.0
        for _ in range(300):
            at += rng.uniform(0.0, 5.0) * SECONDS_PER_DAY
            count = rng.randint(2, 4)
            chosen = rng.sample(range(12), 2 * count if rng.random() < 0.5 and count <= 4 else count)
            size = len(chosen) // count
            groups = [chosen[k * size : (k + 1) * size] for k in range(count)]
            result = ts.rate(
                [[players[i] for i in group] for group in groups], [rng.randint(1, count) for _ in groups], at
            )
            for group, side in zip(groups, result.sides, strict=True):
                for i, player in zip(group, side, strict=True):
                    players[i] = player.after
            out.append(bits(result))
        return out

    assert season(engine(sc=20.0)) == season(engine(sc=20.0))
