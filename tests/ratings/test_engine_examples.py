"""Worked examples of docs/rules.md, from Glickman's papers, the Timed Glicko post and the Widelands proposal."""

from __future__ import annotations

import math

import pytest

from ratings.engines import Params, RatingState, composite, display, get_engine, is_provisional, win_probability
from ratings.engines.glicko import GLICKO2_SCALE, glicko2_rating_period, glicko2_volatility
from ratings.engines.probability import g, rating_difference_for_probability
from ratings.engines.values import SECONDS_PER_DAY

DAY = SECONDS_PER_DAY
GLICKMAN_OPPONENTS = [(RatingState(1400, 30), 1.0), (RatingState(1550, 100), 0.0), (RatingState(1700, 300), 0.0)]


def test_spec_albert_beats_ben_with_plain_glicko():
    """docs/rules.md §3: Albert 1500/200 beats Ben 1500/50 with P_luck = 1: 1586 and 1494."""
    engine = get_engine("tgr", Params(luck_p=1.0))

    result = engine.rate([[RatingState(1500, 200)], [RatingState(1500, 50)]], [1, 2], at=0.0)

    albert, ben = result.sides[0][0], result.sides[1][0]
    assert round(albert.rating) == 1586 and round(albert.delta) == 86
    assert round(ben.rating) == 1494 and round(ben.delta) == -6
    assert albert.expected == pytest.approx(0.5) and albert.score == 1.0


def test_tgr_luck_weighting_scales_the_glicko_change():
    """docs/rules.md §4: equals give P = ½, XD = ½, MERIT = 1 − (1 − P)·½·2; moves scale by 2·MERIT − 1."""
    game = ([RatingState(1500, 200)], [RatingState(1500, 50)])
    plain = get_engine("tgr", Params(luck_p=1.0)).rate(game, [1, 2], 0.0)
    lucky = get_engine("tgr", Params(luck_p=0.9)).rate(game, [1, 2], 0.0)

    merit = 1 - (1 - 0.9) * 0.5 * (1 + 2 * 0.5)
    assert lucky.sides[0][0].delta == pytest.approx(plain.sides[0][0].delta * (2 * merit - 1))
    assert lucky.sides[1][0].delta == pytest.approx(plain.sides[1][0].delta * (2 * merit - 1))
    assert lucky.sides[0][0].rd == pytest.approx(plain.sides[0][0].rd)  # luck touches the rating only


def test_tgr_uses_both_players_pre_game_values():
    """docs/rules.md §3 mends the Timed Glicko post: player 2's update must not see player 1's new rating."""
    engine = get_engine("tgr")
    a, b = RatingState(1620, 90), RatingState(1480, 210)

    together = engine.rate([[a], [b]], [2, 1], 0.0)
    b_first = engine.rate([[b], [a]], [1, 2], 0.0)

    assert together.sides[0][0] == b_first.sides[1][0]
    assert together.sides[1][0] == b_first.sides[0][0]


def test_tgr_inflates_both_rds_to_the_game_instant():
    engine = get_engine("tgr")
    a = RatingState(1500, 50, rd_as_of=0.0)
    b = RatingState(1500, 50, rd_as_of=10 * DAY)

    result = engine.rate([[a], [b]], [1, 2], at=10 * DAY)

    assert result.sides[0][0].rd_at_game == pytest.approx(math.sqrt(50**2 + 20**2 * 10))
    assert result.sides[1][0].rd_at_game == 50
    assert result.composites[0] == (1500, pytest.approx(math.sqrt(50**2 + 20**2 * 10)))


def test_glicko1_glickman_example():
    """Glickman (1999), "The Glicko system", example: 1500/200 vs 1400/30 (W), 1550/100, 1700/300 → 1464 / 151.4."""
    assert [round(g(rd), 4) for rd in (30, 100, 300)] == [0.9955, 0.9531, 0.7242]

    result = get_engine("glicko1").rate_period(RatingState(1500, 200), GLICKMAN_OPPONENTS, at=0.0)

    assert round(result.rating) == 1464
    assert round(result.rd, 1) == 151.4


def test_glicko2_glickman_procedure_exactly():
    """Glickman (2012), "Example of the Glicko-2 system": μ' = −0.2069, φ' = 0.8722, σ' = 0.05999."""
    opponents = [((r.rating - 1500) / GLICKO2_SCALE, r.rd / GLICKO2_SCALE, s) for r, s in GLICKMAN_OPPONENTS]

    mu, phi, sigma = glicko2_rating_period(0.0, 200 / GLICKO2_SCALE, 0.06, opponents, tau=0.5)

    assert round(mu, 4) == -0.2069
    assert round(phi, 4) == 0.8722
    assert sigma == pytest.approx(0.05999, abs=1e-5)  # printed truncated: 0.0599960
    assert 1500 + GLICKO2_SCALE * mu == pytest.approx(1464.06, abs=0.01)
    assert round(GLICKO2_SCALE * phi, 2) == 151.52


def test_glicko2_engine_reproduces_glickmans_example_after_one_idle_period():
    engine = get_engine("glicko2", Params(tau=0.5))
    player = RatingState(1500, 200, 0.06, rd_as_of=-1 * DAY)
    opponents = [(state._replace(volatility=0.06), score) for state, score in GLICKMAN_OPPONENTS]

    result = engine.rate_period(player, opponents, at=0.0)

    assert result.rating == pytest.approx(1464.06, abs=0.01)
    assert round(result.rd, 2) == 151.52
    assert result.volatility == pytest.approx(0.05999, abs=1e-5)


def test_elo_k_factor():
    """docs/rules.md §7: E = 1/(1 + 10^((rb − ra)/400)), r' = r + K(s − E)."""
    result = get_engine("elo", Params(k=32)).rate([[RatingState(1600, 350)], [RatingState(1400, 350)]], [2, 1], 0.0)

    expected = 1 / (1 + 10 ** ((1400 - 1600) / 400))
    assert result.sides[0][0].delta == pytest.approx(32 * (0 - expected))
    assert result.sides[1][0].delta == pytest.approx(-result.sides[0][0].delta)


def test_draw_moves_the_stronger_player_down():
    result = get_engine("tgr").rate([[RatingState(1700, 60)], [RatingState(1500, 60)]], [1, 1], 0.0)

    assert result.sides[0][0].score == 0.5
    assert result.sides[0][0].delta < 0 < result.sides[1][0].delta


def test_widelands_team_composites():
    """docs/rules.md §8 (Widelands): equal → same; +200 → +127.3; 1700/50 + 1300/150 → 1596 / 47.5."""
    assert composite([1432.0, 1432.0], [80, 80])[0] == pytest.approx(1432.0)
    assert composite([1000.0, 1200.0], [50, 50])[0] - 1000 == pytest.approx(127.3, abs=0.05)
    rating, rd = composite([1700.0, 1300.0], [50, 150])
    assert round(rating) == 1596
    assert round(rd, 1) == 47.5


def test_widelands_a_far_weaker_partner_costs_about_120_points():
    """docs/rules.md §8 (Widelands): half the power is 120.412 below; beyond ~895 points a partner stops mattering."""
    assert composite([1800.0, -10_000.0], [50, 50])[0] == pytest.approx(1800 - 120.412, abs=0.001)
    assert composite([1800.0, 1800 - 895.44], [50, 50])[0] == pytest.approx(1800 - 119.412, abs=0.01)
    assert round(composite([1800.0, 900.0], [50, 50])[0]) in (1680, 1681)


def test_uneven_teams_pad_the_smaller_team_with_null_players():
    """docs/rules.md §8: 1 v 2 pads the lone player with one null player (R0 = 1, RD = initial RD)."""
    engine = get_engine("tgr")
    alone = RatingState(1900, 60)
    pair = [RatingState(1700, 60), RatingState(1700, 60)]

    result = engine.rate([[alone], pair], [1, 2], 0.0)

    assert result.composites[0] == pytest.approx(composite([1900.0, 1.0], [60, 350]))
    assert result.composites[1] == pytest.approx((1700, 60 / math.sqrt(2)))
    assert result.sides[0][0].delta > 0 and all(p.delta < 0 for p in result.sides[1])


def test_team_members_move_by_their_own_rd_or_share_the_composite_change():
    newcomer, veteran = RatingState(1500, 300), RatingState(1500, 60)
    opponents = [RatingState(1500, 100), RatingState(1500, 100)]

    own = get_engine("tgr").rate([[newcomer, veteran], opponents], [1, 2], 0.0)
    shared = get_engine("tgr", Params(team_delta="shared")).rate([[newcomer, veteran], opponents], [1, 2], 0.0)

    assert own.sides[0][0].delta > own.sides[0][1].delta > 0
    assert shared.sides[0][0].delta == shared.sides[0][1].delta > 0
    assert shared.sides[1][0].delta == shared.sides[1][1].delta < 0


def test_free_for_all_is_one_rating_period_per_side():
    """docs/rules.md §9: each pair of sides is one game; each side's games form one Glicko period."""
    plain = Params(luck_p=1.0)
    players = [RatingState(1600, 80), RatingState(1500, 120), RatingState(1400, 200)]

    ffa = get_engine("tgr", plain).rate([[p] for p in players], [2, 1, 3], 0.0)
    period = get_engine("glicko1", Params(c=0.0)).rate_period(players[0], [(players[1], 0.0), (players[2], 1.0)], 0.0)

    assert ffa.sides[0][0].rating == pytest.approx(period.rating)
    assert ffa.sides[0][0].rd == pytest.approx(period.rd)
    assert ffa.sides[0][0].score == 0.5  # one win, one loss
    assert ffa.sides[1][0].delta > 0 > ffa.sides[2][0].delta


def test_spec_win_probability_and_its_inverse():
    """docs/rules.md §2, and the rating gap at which P reaches a bound (the queue's 15%–85%)."""
    p = win_probability(1700, 80, 1500, 120)
    big_g = 1 / math.sqrt(1 + 3 * (math.log(10) / 400) ** 2 * (80**2 + 120**2) / math.pi**2)
    assert p == pytest.approx(1 / (1 + 10 ** (-big_g * 200 / 400)))

    gap = rating_difference_for_probability(0.85, 80, 120)
    assert win_probability(1500 + gap, 80, 1500, 120) == pytest.approx(0.85)
    assert rating_difference_for_probability(0.15, 80, 120) == pytest.approx(-gap)


def test_display_scales():
    """docs/rules.md §10: GXE 50% and TR 12,500 at 1500; conservative r − 2·RD; provisional above the threshold."""
    assert display(1500, 350) == (50.0, 12_500.0, 800.0, True)
    shown = display(1600, 80)
    exponent = (
        (1500 - 1600)
        * math.pi
        / math.sqrt(3 * math.log(10) ** 2 * 80**2 + 2500 * (64 * math.pi**2 + 147 * math.log(10) ** 2))
    )
    assert shown.gxe == round(100 / (1 + 10**exponent), 2) == 59.38
    assert shown.tr == pytest.approx(25_000 / (1 + 10**exponent))
    assert shown.conservative == 1440
    assert shown.provisional is False
    assert display(1600, 100.01).provisional is True


def test_provisional_means_an_rd_above_100_unless_a_ladder_says_otherwise():
    """docs/rules.md §12: provisional while RD > 100 (the pseudocode's "greater than", not "at least")."""
    assert not is_provisional(100.0)
    assert is_provisional(math.nextafter(100.0, math.inf))
    assert not display(1500, 100.0).provisional
    assert display(1500, math.nextafter(100.0, math.inf)).provisional
    assert not is_provisional(150.0, 150.0) and is_provisional(150.5, 150.0)
    assert not display(1500, 150.0, provisional_rd=150.0).provisional


def test_provisional_after_18_75_idle_days():
    """docs/rules.md §12: with SC = 20, a player at RD 50 turns provisional after 18.75 idle days."""
    engine = get_engine("tgr")
    state = RatingState(1500, 50, rd_as_of=0.0)

    assert engine.rd_at(state, 18.75 * DAY) == pytest.approx(100)
    assert not display(1500, engine.rd_at(state, 18.7 * DAY)).provisional
    assert display(1500, engine.rd_at(state, 18.8 * DAY)).provisional


def test_rd_growth_per_engine_with_fractional_periods():
    state = RatingState(1500, 60, 0.06, rd_as_of=0.0)
    half_day = 0.5 * DAY

    assert get_engine("tgr", Params(sc=20)).rd_at(state, half_day) == pytest.approx(math.sqrt(60**2 + 20**2 * 0.5))
    assert get_engine("glicko1", Params(c=34.6, period_days=2)).rd_at(state, half_day) == pytest.approx(
        math.sqrt(60**2 + 34.6**2 * 0.25)
    )
    phi = 60 / GLICKO2_SCALE
    assert get_engine("glicko2").rd_at(state, half_day) == pytest.approx(
        GLICKO2_SCALE * math.sqrt(phi**2 + 0.06**2 * 0.5)
    )
    assert get_engine("tgr").rd_at(state, 10_000 * DAY) == 350


def test_queue_rule_resets_the_clock_without_inflating():
    engine = get_engine("tgr")
    state = RatingState(1500, 60, rd_as_of=0.0)

    reset = engine.reset_clock(state, 5 * DAY)

    assert reset.rd == 60 and reset.rd_as_of == 5 * DAY
    assert engine.rd_at(reset, 5 * DAY) == 60 < engine.rd_at(state, 5 * DAY)


def papers_volatility(phi, sigma, delta, v, tau, epsilon=1e-6):
    """Glickman (2012), "Example of the Glicko-2 system", step 5, written out as the paper prints it."""
    a = math.log(sigma**2)

    def f(x):
        return (
            math.exp(x) * (delta**2 - phi**2 - v - math.exp(x)) / (2 * (phi**2 + v + math.exp(x)) ** 2)
            - (x - a) / tau**2
        )

    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > epsilon:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a = f_a / 2
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2)


@pytest.mark.parametrize("tau", [0.3, 0.5, 1.2, 3.0, 8.0])
@pytest.mark.parametrize("surprise", [0.0, 0.4, 1.0, 2.5, 6.0])
@pytest.mark.parametrize(("phi", "v"), [(0.3, 0.5), (1.1521, 1.7785), (2.0, 0.2), (0.05, 30.0)])
@pytest.mark.parametrize("sigma", [0.06, 10.0])
def test_the_volatility_follows_the_papers_iteration_step_by_step(tau, surprise, phi, v, sigma):
    """Step 5 from both starting brackets: Δ² above φ² + v (B = ln(Δ² − φ² − v)) and below (B = a − kτ).

    Both run the same Illinois steps from the same bracket, so they agree far inside the
    stopping tolerance ε; a different bracket or step lands elsewhere within ε (1e-8 and
    more). A large σ with τ above 2 makes the search for B take more than one step of τ;
    its longer iteration lets the two roundings of f part by up to 2e-9.
    """
    delta = surprise * math.sqrt(phi * phi + v)

    assert glicko2_volatility(phi, sigma, delta, v, tau) == pytest.approx(
        papers_volatility(phi, sigma, delta, v, tau), rel=1e-12 if sigma < 1.0 else 1e-8
    )


def test_the_papers_example_volatility_from_its_printed_v_and_delta():
    """Glickman (2012): v = 1.7785, Δ = −0.4834, σ = 0.06, φ = 1.1513, τ = 0.5 give σ' = 0.05999."""
    sigma = glicko2_volatility(1.1513, 0.06, -0.4834, 1.7785, 0.5)

    assert sigma == pytest.approx(papers_volatility(1.1513, 0.06, -0.4834, 1.7785, 0.5), rel=1e-12)
    assert sigma == pytest.approx(0.05999, abs=1e-5)


@pytest.mark.parametrize("placements", [[1, 2, 3], [2, 1, 2], [3, 3, 1, 2], [1, 1, 1]])
def test_a_glicko2_free_for_all_is_one_rating_period_of_the_papers_steps(placements):
    """docs/rules.md §9: each player's period holds a game against every other (steps 3–5, 7–8, no step 6)."""
    players = [
        RatingState(1500.0, 200.0, 0.06, 0.0),
        RatingState(1400.0, 30.0, 0.05, 0.0),
        RatingState(1550.0, 100.0, 0.07, 0.0),
        RatingState(1700.0, 300.0, 0.06, 0.0),
    ][: len(placements)]
    tau = 0.5

    result = get_engine("glicko2", Params(tau=tau)).rate([[p] for p in players], placements, 0.0)

    for index, player in enumerate(players):
        mu, phi = (player.rating - 1500) / GLICKO2_SCALE, player.rd / GLICKO2_SCALE
        v_inverse = total = 0.0
        for other, opponent in enumerate(players):
            if other == index:
                continue
            score = (
                1.0 if placements[index] < placements[other] else 0.5 if placements[index] == placements[other] else 0.0
            )
            g_j = 1 / math.sqrt(1 + 3 * (opponent.rd / GLICKO2_SCALE) ** 2 / math.pi**2)
            e = 1 / (1 + math.exp(-g_j * (mu - (opponent.rating - 1500) / GLICKO2_SCALE)))
            v_inverse += g_j**2 * e * (1 - e)
            total += g_j * (score - e)
        v = 1 / v_inverse
        sigma = papers_volatility(phi, player.volatility, v * total, v, tau)
        phi_new = 1 / math.sqrt(1 / phi**2 + 1 / v)
        mine = result.sides[index][0]
        assert mine.volatility == pytest.approx(sigma, rel=1e-12)
        assert mine.rd == pytest.approx(GLICKO2_SCALE * phi_new, rel=1e-12)
        assert mine.rating == pytest.approx(player.rating + GLICKO2_SCALE * phi_new**2 * total, rel=1e-12)
