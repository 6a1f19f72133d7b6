"""The Bayesian share of a team's result (``team_delta="bayes"``, docs/rules.md §8).

The composite is updated as one player; each member gets the part of that update which
conditioning the members' independent Gaussians on the composite gives them. The tests
check it against a Kalman update written out with explicit matrices, against the
properties the derivation promises, and against the docs' worked example.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ratings.engines import ENGINES, Params, RatingState, get_engine
from ratings.engines.probability import Q
from ratings.engines.teams import composite, pad, power_shares

GLICKO_FAMILY = ("tgr", "glicko1", "glicko2")
WITH_TEAM_UPDATE = sorted(set(ENGINES) - {"trueskill"})  # TrueSkill's teams are sums: no team update
ratings = st.floats(min_value=800.0, max_value=2500.0)
rds = st.floats(min_value=30.0, max_value=350.0)
members = st.tuples(ratings, rds)


def state(rating: float, rd: float) -> RatingState:
    return RatingState(rating, rd, 0.06, 0.0)


def kalman(team: list[tuple[float, float]], size: int, delta_team: float, information: float):
    """Condition independent member ratings on the composite's new value, with matrices.

    State x = the padded team's ratings, covariance P = diag(RD²); observation H = u (the
    composite's gradient). Gain K = P·Hᵀ/(H·P·Hᵀ). The composite's mean moves by
    ``delta_team`` and its variance shrinks by the factor ``1/(1 + information·S)``.
    """
    ratings, rds = pad([r for r, _ in team], [rd for _, rd in team], size, null_rating=1.0, null_rd=350.0)
    u = power_shares(ratings)
    p = [[(rds[i] ** 2 if i == j else 0.0) for j in range(size)] for i in range(size)]
    ph = [sum(p[i][j] * u[j] for j in range(size)) for i in range(size)]
    s = sum(u[i] * ph[i] for i in range(size))
    gain = [value / s for value in ph]
    shrink = information * s / (1.0 + information * s)  # 1 − S'/S
    means = [gain[i] * delta_team for i in range(len(team))]
    variances = [p[i][i] - gain[i] * ph[i] * shrink for i in range(len(team))]
    return means, variances


@pytest.mark.parametrize("name", GLICKO_FAMILY)
@given(team_a=st.lists(members, min_size=1, max_size=4), team_b=st.lists(members, min_size=1, max_size=4))
def test_members_move_as_the_gaussian_conditioning_says(name, team_a, team_b):
    engine = get_engine(name, Params(team_delta="bayes", luck_p=1.0))
    sides = [[state(*m) for m in team_a], [state(*m) for m in team_b]]
    size = max(len(team_a), len(team_b))
    if size == 1:
        return  # a 1 v 1 game: no team, the 1 v 1 update (checked below)

    result = engine.rate(sides, [1, 2], 0.0)

    for index, team in enumerate((team_a, team_b)):
        # The composite as one Glicko player (Glickman 1999 step 2): 1/d² = q²g²E(1 − E),
        # Δ = q·g·(s − E)/(1/RD² + 1/d²).
        team_rd = result.composites[index][1]
        expected_score = result.sides[index][0].expected
        score = 1.0 if index == 0 else 0.0
        opponent_rd = result.composites[1 - index][1]
        g = 1.0 / math.sqrt(1.0 + 3.0 * Q * Q * opponent_rd**2 / math.pi**2)
        information = Q * Q * g * g * expected_score * (1.0 - expected_score)
        delta_team = Q * g * (score - expected_score) / (1.0 / team_rd**2 + information)
        means, variances = kalman(list(team), size, delta_team, information)
        for player, mean, variance in zip(result.sides[index], means, variances, strict=True):
            assert player.delta == pytest.approx(mean, rel=1e-9, abs=1e-9)
            assert player.rd == pytest.approx(math.sqrt(variance), rel=1e-9)


@pytest.mark.parametrize("name", WITH_TEAM_UPDATE)
@given(
    teams=st.integers(2, 4).flatmap(
        lambda n: st.lists(st.lists(members, min_size=n, max_size=n), min_size=2, max_size=2)
    )
)
def test_the_members_changes_add_up_to_the_composites(name, teams):
    """Σ u_i·Δ_i = Δ_team: the composite moves (to first order) by the team's own change.

    Even teams only: in an uneven game the null players padding the smaller team hold a
    small share of its variance, and the part of the change it carries goes to nobody.
    """
    team_a, team_b = teams
    sides = [[state(*m) for m in team_a], [state(*m) for m in team_b]]
    size = len(team_a)
    bayes = get_engine(name, Params(team_delta="bayes", luck_p=1.0)).rate(sides, [2, 1], 0.0)
    shared = get_engine(name, Params(team_delta="shared", luck_p=1.0)).rate(sides, [2, 1], 0.0)

    for index, team in enumerate((team_a, team_b)):
        ratings, _ = pad([r for r, _ in team], [rd for _, rd in team], size, null_rating=1.0, null_rd=350.0)
        shares = power_shares(ratings)
        moved = math.fsum(u * player.delta for u, player in zip(shares, bayes.sides[index], strict=False))
        assert moved == pytest.approx(shared.sides[index][0].delta, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("name", WITH_TEAM_UPDATE)
@given(team_a=st.lists(members, min_size=1, max_size=4), team_b=st.lists(members, min_size=1, max_size=4))
def test_no_member_gains_certainty_the_team_did_not(name, team_a, team_b):
    """Each member's RD shrinks, never below the 1 v 1 update's, and never grows."""
    sides = [[state(*m) for m in team_a], [state(*m) for m in team_b]]
    bayes = get_engine(name, Params(team_delta="bayes")).rate(sides, [1, 2], 0.0)
    own = get_engine(name, Params(team_delta="own")).rate(sides, [1, 2], 0.0)

    for index, team in enumerate((team_a, team_b)):
        for (_, rd), shared_player, own_player in zip(team, bayes.sides[index], own.sides[index], strict=True):
            assert own_player.rd - 1e-9 <= shared_player.rd <= rd + 1e-9


@pytest.mark.parametrize("name", WITH_TEAM_UPDATE)
def test_equal_partners_move_half_as_far_as_each_moving_by_their_own_rd(name):
    """Two equal partners: each gets the composite's change, not a whole 1 v 1 game's."""
    players = [[state(1500.0, 100.0), state(1500.0, 100.0)], [state(1500.0, 100.0), state(1500.0, 100.0)]]
    bayes = get_engine(name, Params(team_delta="bayes", luck_p=1.0)).rate(players, [1, 2], 0.0)
    shared = get_engine(name, Params(team_delta="shared", luck_p=1.0)).rate(players, [1, 2], 0.0)

    for side in (0, 1):
        for player in bayes.sides[side]:
            assert player.delta == pytest.approx(shared.sides[side][0].delta, rel=1e-12)
    # RD² shrinks by half the team's share: RD'² = RD²·(1 − (1 − RDt'²/RDt²)/2).
    team_rd2 = bayes.composites[0][1] ** 2
    assert team_rd2 == pytest.approx(5_000.0)


@pytest.mark.parametrize("name", WITH_TEAM_UPDATE)
@given(players=st.lists(members, min_size=2, max_size=8), data=st.data())
def test_sides_of_one_player_are_rated_as_without_teams(name, players, data):
    """A free-for-all of single players has no shares: "bayes" equals "own" to the bit."""
    placements = data.draw(st.lists(st.integers(1, 8), min_size=len(players), max_size=len(players)))
    sides = [[state(*m)] for m in players]

    bayes = get_engine(name, Params(team_delta="bayes")).rate(sides, placements, 0.0)
    own = get_engine(name, Params(team_delta="own")).rate(sides, placements, 0.0)

    assert bayes == own


def test_the_docs_worked_example():
    """docs/rules.md §8, example 2, the third column: a pair beats a padded trio (TGR defaults)."""
    pair = [state(1700.0, 50.0), state(1300.0, 150.0)]
    trio = [state(1550.0, 80.0), state(1500.0, 80.0), state(1450.0, 300.0)]

    result = get_engine("tgr", Params(team_delta="bayes")).rate([pair, trio], [1, 2], 0.0)

    shown = [(round(p.delta, 2), round(p.rd, 2)) for side in result.sides for p in side]
    assert shown == [(4.78, 49.61), (4.30, 149.89), (-5.72, 79.63), (-4.29, 79.79), (-45.23, 293.85)]
    assert composite([1700.0, 1300.0, 1.0], [50.0, 150.0, 350.0])[0] == pytest.approx(1525.72, abs=0.005)


def test_the_docs_example_of_four_equal_players():
    """docs/rules.md §8, example 4: own RD gives each partner more than a 1 v 1 win."""
    team = [state(1500.0, 100.0), state(1500.0, 100.0)]
    own = get_engine("tgr", Params(team_delta="own", luck_p=1.0)).rate([team, team], [1, 2], 0.0)
    bayes = get_engine("tgr", Params(team_delta="bayes", luck_p=1.0)).rate([team, team], [1, 2], 0.0)
    duel = get_engine("tgr", Params(luck_p=1.0)).rate([team[:1], team[:1]], [1, 2], 0.0)

    assert (round(own.sides[0][0].delta, 2), round(own.sides[0][0].rd, 2)) == (26.03, 96.28)
    assert (round(bayes.sides[0][0].delta, 2), round(bayes.sides[0][0].rd, 2)) == (13.51, 99.05)
    assert (round(duel.sides[0][0].delta, 2), round(duel.sides[0][0].rd, 2)) == (25.51, 96.44)


def glickman_side(composites, index, scores, elo):
    """A side's composite as one player against every other side (Glickman 1999 step 2, docs/rules.md §7, §9).

    Returns (mean E, mean s, Σg²E(1 − E), Σg(s − E)); Elo's E has no g (docs/rules.md §2).
    """
    rating = composites[index][0]
    expected, information, total = [], 0.0, 0.0
    for other, (opponent, opponent_rd) in enumerate(composites):
        if other == index:
            continue
        g = 1.0 / math.sqrt(1.0 + 3.0 * Q * Q * opponent_rd**2 / math.pi**2)
        e = 1.0 / (1.0 + 10 ** (-(1.0 if elo else g) * (rating - opponent) / 400.0))
        expected.append(e)
        information += g * g * e * (1.0 - e)
        total += g * (scores[other] - e)
    mean_score = sum(scores[other] for other in range(len(composites)) if other != index) / len(expected)
    return sum(expected) / len(expected), mean_score, information, total


@pytest.mark.parametrize("team_delta", ["own", "shared", "bayes"])
@pytest.mark.parametrize("name", ["tgr", "glicko1", "elo"])
@given(
    teams=st.lists(st.lists(members, min_size=1, max_size=3), min_size=2, max_size=4),
    data=st.data(),
)
def test_every_member_of_every_side_gets_what_docs_rules_8_says(name, team_delta, teams, data):
    """Two to four teams, each its padded composite against every other, then shared out by ``team_delta``.

    "own": member i moves by their own RD, ``q·RD_i'²·Σg(s − E)`` (Elo: ``K·mean(s − E)``);
    "shared": every member gets the composite's change; "bayes": the Gaussian conditioning
    (``kalman``). Every field of each result: the new state, the change, mean E, mean s and
    the RD the update started from.
    """
    assume(sum(len(team) for team in teams) <= 8)
    placements = data.draw(st.lists(st.integers(1, 4), min_size=len(teams), max_size=len(teams)))
    at = 100.0
    engine = get_engine(name, Params(team_delta=team_delta, luck_p=1.0))
    sides = [[RatingState(r, rd, 0.06, at) for r, rd in team] for team in teams]
    size = max(len(team) for team in teams)
    composites = [
        composite(*pad([r for r, _ in team], [rd for _, rd in team], size, null_rating=1.0, null_rd=350.0))
        for team in teams
    ]

    result = engine.rate(sides, placements, at)

    for mine, expected_composite in zip(result.composites, composites, strict=True):
        assert mine == pytest.approx(expected_composite, rel=1e-12)
    for index, team in enumerate(teams):
        scores = [1.0 if placements[index] < p else 0.5 if placements[index] == p else 0.0 for p in placements]
        mean_e, mean_s, information, total = glickman_side(composites, index, scores, name == "elo")
        team_rd = composites[index][1]
        team_rd2_new = 1.0 / (1.0 / team_rd**2 + Q * Q * information)
        team_change = engine.params.k * (mean_s - mean_e) if name == "elo" else Q * team_rd2_new * total
        if team_delta == "bayes" and size > 1:
            means, variances = kalman(team, size, team_change, Q * Q * information)
        else:
            variances = [1.0 / (1.0 / rd**2 + Q * Q * information) for _, rd in team]
            own = name != "elo" and (team_delta == "own" or len(team) == 1)
            means = [Q * variance * total if own else team_change for variance in variances]
        for (rating, rd), player, mean, variance in zip(team, result.sides[index], means, variances, strict=True):
            assert player.delta == pytest.approx(mean, rel=1e-9, abs=1e-9)
            assert player.rating == pytest.approx(rating + mean, rel=1e-12, abs=1e-9)
            assert player.rd == pytest.approx(math.sqrt(variance), rel=1e-9)
            assert (player.volatility, player.rd_as_of, player.rd_at_game) == (0.06, at, pytest.approx(rd, rel=1e-12))
            assert (player.expected, player.score) == pytest.approx((mean_e, mean_s), rel=1e-12)
