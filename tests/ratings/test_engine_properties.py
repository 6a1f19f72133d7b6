"""Properties of the engines over wide random inputs (hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ratings.engines import ENGINES, Params, RatingState, composite, get_engine, win_probability
from ratings.engines.base import Engine
from ratings.engines.teams import LN_BETA, null_influence_bound, pad
from ratings.engines.values import SECONDS_PER_DAY, TEAM_DELTA_MODES, TRUESKILL_ORIGIN

ENGINE_NAMES = sorted(ENGINES)
ratings = st.floats(min_value=-1_000, max_value=5_000)
rds = st.floats(min_value=1.0, max_value=350.0)
volatilities = st.floats(min_value=0.01, max_value=0.2)
idle_days = st.floats(min_value=0.0, max_value=400.0)
luck = st.floats(min_value=5 / 6, max_value=1.0)


@st.composite
def states(draw, rating=ratings, rd=rds):
    return RatingState(draw(rating), draw(rd), draw(volatilities), -draw(idle_days) * SECONDS_PER_DAY)


def assert_same_result(p, q, rel: float = 1e-12) -> None:
    """Equal up to rounding; Glicko-2's σ' only up to its Illinois tolerance (ε = 1e-6 on ln σ²).

    A rating is the rating before plus the change, so its rounding is relative to those two
    terms, not to the sum: a change of 582 from 1500 down to 7.7 may differ by 1e-11 there.
    The other figures get 1e-10 at the least: after a result the engines held all but certain
    (an expected score of 8e-34 on one path, 0 on the other), an RD of 171 differed by 2e-10."""
    terms = abs(p.rating - p.delta) + abs(p.delta)
    assert p.rating == pytest.approx(q.rating, rel=rel, abs=rel * max(terms, 1.0))
    assert p._replace(volatility=0.0, rating=0.0) == pytest.approx(
        q._replace(volatility=0.0, rating=0.0), rel=max(rel, 1e-10), abs=rel
    )
    assert p.volatility == pytest.approx(q.volatility, rel=1e-6)


def finite(result) -> bool:
    return all(math.isfinite(value) for side in result.sides for player in side for value in player)


@given(name=st.sampled_from(ENGINE_NAMES), a=states(), b=states(), luck_p=luck)
def test_a_win_never_lowers_and_a_loss_never_raises(name, a, b, luck_p):
    result = get_engine(name, Params(luck_p=luck_p)).rate([[a], [b]], [1, 2], 0.0)

    winner, loser = result.sides[0][0], result.sides[1][0]
    assert winner.delta >= 0.0 and winner.rating >= a.rating
    assert loser.delta <= 0.0 and loser.rating <= b.rating


@given(
    name=st.sampled_from(ENGINE_NAMES),
    team_a=st.lists(states(), min_size=1, max_size=4),
    team_b=st.lists(states(), min_size=1, max_size=4),
    luck_p=luck,
    team_delta=st.sampled_from(TEAM_DELTA_MODES),
)
def test_team_winners_never_lose_and_losers_never_gain(name, team_a, team_b, luck_p, team_delta):
    params = Params(luck_p=luck_p, team_delta=team_delta)

    result = get_engine(name, params).rate([team_a, team_b], [1, 2], 0.0)

    assert all(player.delta >= 0.0 for player in result.sides[0])
    assert all(player.delta <= 0.0 for player in result.sides[1])


@given(name=st.sampled_from(ENGINE_NAMES), players=st.lists(states(), min_size=2, max_size=8), data=st.data())
def test_rd_never_grows_through_a_game(name, players, data):
    """A game only informs; TrueSkill first adds its τ, so its bound is sqrt(RD² + τ²) (docs/rules.md §20)."""
    placements = data.draw(st.lists(st.integers(1, 8), min_size=len(players), max_size=len(players)))
    engine = get_engine(name)
    dynamics = engine.params.dynamics if name == "trueskill" else 0.0

    result = engine.rate([[p] for p in players], placements, 0.0)

    for side in result.sides:
        for player in side:
            assert player.rd <= math.sqrt(player.rd_at_game**2 + dynamics**2) * (1 + 1e-12)
            assert player.rd > 0.0


@given(a=states(), b=states())
def test_win_probabilities_sum_to_one(a, b):
    p_ab = win_probability(a.rating, a.rd, b.rating, b.rd)
    p_ba = win_probability(b.rating, b.rd, a.rating, a.rd)

    assert p_ab + p_ba == pytest.approx(1.0, abs=1e-12)
    assert 0.0 <= p_ab <= 1.0


@given(name=st.sampled_from(ENGINE_NAMES), a=states(), b=states(), outcome=st.sampled_from([[1, 2], [2, 1], [1, 1]]))
def test_swapping_the_players_swaps_the_results(name, a, b, outcome):
    engine = get_engine(name)

    forward = engine.rate([[a], [b]], outcome, 0.0)
    backward = engine.rate([[b], [a]], outcome[::-1], 0.0)

    for mine, theirs in ((forward.sides[0][0], backward.sides[1][0]), (forward.sides[1][0], backward.sides[0][0])):
        for p, q in zip(mine, theirs, strict=True):
            assert p == pytest.approx(q, rel=1e-12, abs=1e-12)


@given(name=st.sampled_from(ENGINE_NAMES), players=st.lists(states(), min_size=3, max_size=6), data=st.data())
def test_free_for_all_results_follow_their_players_when_sides_are_reordered(name, players, data):
    placements = data.draw(st.lists(st.integers(1, 6), min_size=len(players), max_size=len(players)))
    order = data.draw(st.permutations(range(len(players))))
    engine = get_engine(name)
    if name == "trueskill":  # tied sides stand in its chain by strength; two equal ones by position
        # Strength as the chain sees it: μ counted from rating 450 and σ² + τ² + β², in which
        # ratings a hair apart (0 and 2e-45) are equal.
        params = engine.params
        tied = [
            (p.rating - TRUESKILL_ORIGIN, engine.rd_at(p, 0.0) ** 2 + params.dynamics**2 + params.beta**2, place)
            for p, place in zip(players, placements, strict=True)
        ]
        assume(len(set(tied)) == len(tied))

    straight = engine.rate([[p] for p in players], placements, 0.0)
    shuffled = engine.rate([[players[i]] for i in order], [placements[i] for i in order], 0.0)

    # TrueSkill's free-for-all sweeps until no difference moves by the package's tolerance, and
    # the order of its sums can move that stop by one sweep: its results agree to a millionth
    # of a point, not to the bit (a replay lists the sides as the game did, so it is exact).
    close = {"abs": 1e-4} if name == "trueskill" else {"rel": 1e-12}
    for position, index in enumerate(order):
        assert shuffled.sides[position][0].rating == pytest.approx(straight.sides[index][0].rating, **close)
        assert shuffled.sides[position][0].rd == pytest.approx(straight.sides[index][0].rd, **close)


@given(name=st.sampled_from(ENGINE_NAMES), players=st.lists(states(), min_size=2, max_size=8))
def test_first_place_in_a_free_for_all_never_loses_rating(name, players):
    placements = [1] + [2] * (len(players) - 1)

    result = get_engine(name).rate([[p] for p in players], placements, 0.0)

    # A winner who was sure to win (E = 0.999998 at rating 4961) moves by less than the rating's last
    # bit; Glicko-2's trip to its own scale and back may then round it one unit of that bit down.
    first = result.sides[0][0]
    assert first.delta >= -4 * math.ulp(players[0].rating)


@given(members=st.lists(st.tuples(ratings, rds), min_size=1, max_size=8))
def test_composite_lies_between_the_weakest_and_strongest(members):
    team_ratings = [r for r, _ in members]

    rating, rd = composite(team_ratings, [d for _, d in members])

    assert min(team_ratings) - 1e-9 <= rating <= max(team_ratings) + 1e-9
    assert 0.0 < rd <= max(d for _, d in members) + 1e-9


@given(rating=ratings, rd=rds, size=st.integers(1, 8))
def test_equal_members_give_their_own_rating(rating, rd, size):
    team_rating, team_rd = composite([rating] * size, [rd] * size)

    assert team_rating == pytest.approx(rating, abs=1e-9)
    assert team_rd == pytest.approx(rd / math.sqrt(size))


@given(members=st.lists(st.tuples(ratings, rds), min_size=1, max_size=8), shift=st.floats(-2_000, 2_000))
def test_adding_d_to_every_member_adds_d(members, shift):
    base = composite([r for r, _ in members], [d for _, d in members])
    moved = composite([r + shift for r, _ in members], [d for _, d in members])

    assert moved[0] == pytest.approx(base[0] + shift, abs=1e-8)
    assert moved[1] == pytest.approx(base[1], rel=1e-9)


@given(members=st.lists(st.tuples(st.floats(600, 5_000), rds), min_size=1, max_size=7), extra=st.integers(1, 7))
def test_null_players_change_a_composite_only_through_the_head_count(members, extra):
    """Padding adds ``ln(n'/n)/ln β`` for the head count plus at most a vanishing power term.

    The power term is ``ln(1 + k·β^(R0 − Rmax))/ln β``: under 0.01 points once the strongest
    member is above ~2,100 (for up to 7 nulls), and about 5 points for a lone 600 player,
    which is the "affected range" the Widelands proposal accepts (docs/rules.md §8).
    """
    assume(len(members) + extra <= 8)
    team_ratings = [r for r, _ in members]
    team_rds = [d for _, d in members]
    size = len(members) + extra
    base = composite(team_ratings, team_rds)

    padded = composite(*pad(team_ratings, team_rds, size, null_rating=1.0, null_rd=350.0))

    head_count = math.log(size / len(members)) / LN_BETA
    power_change = padded[0] - (base[0] - head_count)
    bound = null_influence_bound(max(team_ratings), extra, 1.0)
    assert 0.0 <= power_change <= bound + 1e-9
    if max(team_ratings) >= 2_100:
        assert power_change < 0.01


@given(
    name=st.sampled_from(ENGINE_NAMES),
    players=st.lists(
        st.builds(
            RatingState,
            st.floats(-1e6, 1e6),
            st.floats(1e-2, 1e5),
            st.floats(1e-4, 10.0),
            st.floats(-1e10, 1e10),
        ),
        min_size=2,
        max_size=8,
    ),
    data=st.data(),
)
def test_no_nan_or_infinity_for_any_finite_input(name, players, data):
    placements = data.draw(st.lists(st.integers(1, 8), min_size=len(players), max_size=len(players)))
    engine = get_engine(name, Params(rd_max=1e5))
    split = data.draw(st.integers(1, len(players) - 1))

    assert finite(engine.rate([[p] for p in players], placements, 0.0))
    assert finite(engine.rate([players[:split], players[split:]], placements[:2], 0.0))


@given(name=st.sampled_from(ENGINE_NAMES), a=states(), b=states(), outcome=st.sampled_from([[1, 2], [2, 1], [1, 1]]))
def test_the_one_v_one_shortcut_equals_the_general_path(name, a, b, outcome):
    engine = get_engine(name)

    fast = engine.rate([[a], [b]], outcome, 0.0)
    general = Engine._rate_general(engine, [[a], [b]], outcome, 0.0)

    for side_fast, side_general in zip(fast.sides, general.sides, strict=True):
        assert_same_result(side_fast[0], side_general[0])


@given(name=st.sampled_from(ENGINE_NAMES), a=states(), b=states(), split=st.floats(0.0, 1.0))
def test_materialising_an_rd_never_changes_a_later_game(name, a, b, split):
    """docs/rules.md §1: writing RD(t) back at any instant before the game changes nothing."""
    engine = get_engine(name)
    at = 0.0
    midnight = a.rd_as_of + (at - a.rd_as_of) * split

    direct = engine.rate([[a], [b]], [1, 2], at)
    after = engine.rate([[engine.materialize(a, midnight)], [b]], [1, 2], at)

    assert engine.rd_at(engine.materialize(a, midnight), at) == pytest.approx(engine.rd_at(a, at), rel=1e-12)
    assert_same_result(direct.sides[0][0], after.sides[0][0], rel=1e-9)


@pytest.mark.parametrize(
    ("sides", "placements", "message"),
    [
        ([[RatingState(1500, -5)], [RatingState(1500, 50)]], [1, 2], r"sides\[0\]\[0\]\.rd must be above 0, got -5"),
        (
            [[RatingState(float("nan"), 50)], [RatingState(1500, 50)]],
            [1, 2],
            r"sides\[0\]\[0\]\.rating must be a finite",
        ),
        (
            [[RatingState(1500, 50, 0.0)], [RatingState(1500, 50)]],
            [1, 2],
            r"sides\[0\]\[0\]\.volatility must be above 0",
        ),
        ([[], [RatingState(1500, 50)]], [1, 2], r"sides\[0\] must have at least one player"),
        ([[RatingState(1500, 50)] * 5, [RatingState(1500, 50)] * 4], [1, 2], r"at most 8 players in total, got 9"),
        ([[RatingState(1500, 50)]], [1], r"at least 2 sides"),
        ([[RatingState(1500, 50)], [RatingState(1500, 50)]], [1], r"placements must give one place per side"),
        ([[RatingState(1500, 50)], [RatingState(1500, 50)]], [0, 1], r"placements\[0\] must be a whole number"),
        ([[RatingState(1500, 50)], [RatingState(1500, 50)]], [1.5, 1], r"placements\[0\] must be a whole number"),
    ],
)
def test_invalid_games_raise_a_value_error_naming_the_field(sides, placements, message):
    with pytest.raises(ValueError, match=message):
        get_engine("tgr").rate(sides, placements, 0.0)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"luck_p": 0.8}, r"luck_p must be between 5/6 and 1"),
        ({"luck_p": 1.01}, r"luck_p must be between 5/6 and 1"),
        ({"sc": -1}, r"sc must be at least 0, got -1"),
        ({"rd_max": 0}, r"rd_max must be above 0"),
        ({"tau": float("nan")}, r"tau must be a finite number"),
        ({"team_delta": "both"}, r"team_delta must be 'own', 'shared' or 'bayes'"),
        ({"beta": 0.0}, r"beta must be above 0"),
        ({"dynamics": -1.0}, r"dynamics must be at least 0"),
        ({"draw_probability": 1.0}, r"draw_probability must be below 1"),
    ],
)
def test_invalid_params_raise_a_value_error_naming_the_field(params, message):
    with pytest.raises(ValueError, match=message):
        Params(**params)


def test_unknown_engine_is_named():
    with pytest.raises(ValueError, match="engine must be one of tgr, glicko1, glicko2, elo, trueskill; got 'chess'"):
        get_engine("chess")


def test_game_at_a_non_finite_instant_is_refused():
    with pytest.raises(ValueError, match="at must be a finite number"):
        get_engine("tgr").rate([[RatingState(1500, 50)], [RatingState(1500, 50)]], [1, 2], float("inf"))


@given(
    name=st.sampled_from(ENGINE_NAMES),
    a=states(rd=st.floats(1.0, 300.0)),
    b=states(rd=st.floats(1.0, 300.0)),
    outcome=st.sampled_from([[1, 2], [2, 1], [1, 1]]),
)
def test_the_one_v_one_shortcut_grows_an_rd_idle_for_under_a_second(name, a, b, outcome):
    """docs/rules.md §1: an RD grows with any idle time, a fraction of a second too, as ``rd_at`` says."""
    engine = get_engine(name)
    a, b = a._replace(rd_as_of=-0.5), b._replace(rd_as_of=-0.25)

    fast = engine.rate([[a], [b]], outcome, 0.0)
    general = Engine._rate_general(engine, [[a], [b]], outcome, 0.0)

    for composite_fast, composite_general in zip(fast.composites, general.composites, strict=True):
        assert composite_fast == pytest.approx(composite_general, rel=1e-12)
    for player, state, (side_fast, side_general) in zip(
        (a, b), (a, b), zip(fast.sides, general.sides, strict=True), strict=True
    ):
        assert side_fast[0].rd_at_game == engine.rd_at(state, 0.0) > player.rd
        assert_same_result(side_fast[0], side_general[0])


@given(name=st.sampled_from(["tgr", "glicko1", "glicko2"]), a=states(), b=states(), floor=st.floats(60.0, 340.0))
def test_the_one_v_one_shortcut_keeps_the_rd_floor(name, a, b, floor):
    """docs/rules.md §1: no game leaves an RD below ``rd_min``; the shortcut floors as the general path does."""
    engine = get_engine(name, Params(rd_min=floor))
    a, b = a._replace(rd=min(a.rd, 350.0)), b._replace(rd=min(b.rd, 350.0))

    fast = engine.rate([[a], [b]], [1, 2], 0.0)
    general = Engine._rate_general(engine, [[a], [b]], [1, 2], 0.0)
    unfloored = get_engine(name).rate([[a], [b]], [1, 2], 0.0)

    for side_fast, side_general, side_free in zip(fast.sides, general.sides, unfloored.sides, strict=True):
        assert side_fast[0].rd == max(floor, side_free[0].rd)
        assert_same_result(side_fast[0], side_general[0])
