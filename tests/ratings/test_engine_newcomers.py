"""The newcomer rule as pure functions (docs/rules.md §15, "New accounts carry less weight").

A player whose every opponent in a game has fewer than ``newcomer_games`` rated games moves
at most ``newcomer_cap`` points in it: ``ratings.engines.newcomers.newcomers_limit`` checked
against the engines' own results and by properties, with no database (``make mutate`` runs
it). The ladder's path is tests/ratings/test_newcomers.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ratings.engines import Params, RatingState, get_engine
from ratings.engines.newcomers import newcomers_limit
from ratings.engines.values import GameResult, PlayerResult

ON = Params(newcomer_games=5, newcomer_cap=30.0)
NEW = RatingState(1500.0, 350.0, 0.06, 0.0)
REGULAR = RatingState(1700.0, 60.0, 0.06, 0.0)


def rated(sides, games, placements=(1, 2), params=ON, engine="tgr"):
    """The engine's result and the bounded one, for ``sides`` with ``games`` each."""
    plain = get_engine(engine, params).rate(sides, list(placements), 10.0)
    return plain, newcomers_limit(plain, sides, games, params)


def test_two_newcomers_move_the_cap_and_keep_the_engines_rd():
    plain, bounded = rated([[NEW], [NEW]], [[0], [0]])
    (winner,), (loser,) = bounded.sides

    assert plain.sides[0][0].delta > 100  # what two new ratings would move unbounded
    assert (winner.rating, winner.delta, loser.rating, loser.delta) == (1530.0, 30.0, 1470.0, -30.0)
    assert (winner.rd, winner.volatility, winner.expected) == (
        plain.sides[0][0].rd,
        plain.sides[0][0].volatility,
        plain.sides[0][0].expected,
    )


def test_a_newcomer_beating_a_regular_moves_freely_and_the_regular_is_bounded():
    plain, bounded = rated([[REGULAR], [NEW]], [[80], [0]], placements=(2, 1))

    assert bounded.sides[1] == plain.sides[1]  # the newcomer's opponent is a regular
    assert bounded.sides[1][0].delta > 200
    assert -30.0 <= bounded.sides[0][0].delta < 0  # the regular's only opponent is new: bounded, under the cap


def test_the_rule_off_or_a_regular_opponent_leaves_the_result_as_it_is():
    off = Params(newcomer_games=0)
    plain, bounded = rated([[NEW], [NEW]], [[0], [0]], params=off)
    assert bounded is plain

    plain, bounded = rated([[NEW], [NEW]], [[5], [5]])  # five games each: regulars
    assert bounded is plain


def test_a_team_game_is_bounded_only_for_sides_that_meet_newcomers_only():
    sides = [[NEW, NEW], [NEW, REGULAR]]
    plain, bounded = rated(sides, [[0, 1], [2, 80]])

    assert bounded.sides[0] == plain.sides[0]  # one opponent is a regular
    assert all(abs(member.delta) <= 30.0 for member in bounded.sides[1])
    assert any(abs(member.delta) > 30.0 for member in plain.sides[1])


def test_a_free_for_all_player_is_bounded_when_every_other_player_is_new():
    sides = [[NEW], [NEW], [REGULAR]]
    plain, bounded = rated(sides, [[0], [0], [80]], placements=(1, 2, 3))

    assert bounded.sides[0] == plain.sides[0] and bounded.sides[1] == plain.sides[1]  # each meets the regular
    assert abs(bounded.sides[2][0].delta) <= 30.0


states = st.builds(
    RatingState,
    st.floats(800, 2400),
    st.floats(40, 350),
    st.just(0.06),
    st.just(0.0),
)


@settings(max_examples=300, deadline=None)
@given(
    a=states,
    b=states,
    games_a=st.integers(0, 9),
    games_b=st.integers(0, 9),
    cap=st.floats(1, 200),
    engine=st.sampled_from(["tgr", "glicko1", "glicko2", "elo", "trueskill"]),
    placements=st.sampled_from([(1, 2), (2, 1), (1, 1)]),
)
def test_properties_of_the_bound(a, b, games_a, games_b, cap, engine, placements):
    params = Params(newcomer_games=5, newcomer_cap=cap)
    plain, bounded = rated([[a], [b]], [[games_a], [games_b]], placements, params, engine)

    for state, opponent_games, before, after in (
        (a, games_b, plain.sides[0][0], bounded.sides[0][0]),
        (b, games_a, plain.sides[1][0], bounded.sides[1][0]),
    ):
        assert after.rd == before.rd and after.volatility == before.volatility
        assert after.rating == state.rating + after.delta or after == before
        if opponent_games >= 5:
            assert after == before
        else:
            assert abs(after.delta) <= cap
            assert after.delta * before.delta >= 0  # the bound never turns a gain into a loss
            assert abs(after.delta) == min(abs(before.delta), cap)


def test_params_refuse_a_bad_rule():
    with pytest.raises(ValueError, match="newcomer_games"):
        Params(newcomer_games=-1)
    with pytest.raises(ValueError, match="newcomer_cap"):
        Params(newcomer_games=5, newcomer_cap=0.0)


def hand_made(deltas: list[float], composites=((1500.0, 350.0), (1500.0, 350.0))) -> GameResult:
    """A 1 v 1 result with these rating changes, every other field distinct, from two new 1500s."""
    return GameResult(
        tuple(
            (PlayerResult(1500.0 + delta, 300.0 + n, 0.05 + n, 7.0 + n, delta, 0.4 + n / 10, 1.0 - n, 340.0 + n),)
            for n, delta in enumerate(deltas)
        ),
        composites,
    )


def test_a_bounded_player_keeps_every_field_of_the_engine_but_rating_and_delta():
    plain = hand_made([75.0, -75.0])

    bounded = newcomers_limit(plain, [[NEW], [NEW]], [[0], [0]], ON)

    assert bounded.composites == plain.composites
    for (before,), (after,), sign in zip(plain.sides, bounded.sides, (1, -1), strict=True):
        assert after == before._replace(rating=1500.0 + sign * 30.0, delta=sign * 30.0)


def test_a_change_of_exactly_the_cap_or_less_returns_the_engines_result_itself():
    at_the_cap = hand_made([30.0, -30.0])
    under = hand_made([12.5, -0.0])

    assert newcomers_limit(at_the_cap, [[NEW], [NEW]], [[0], [0]], ON) is at_the_cap
    assert newcomers_limit(under, [[NEW], [NEW]], [[0], [0]], ON) is under
    plain, bounded = rated([[NEW], [NEW]], [[0], [0]], params=Params(newcomer_games=5, newcomer_cap=1000.0))
    assert bounded is plain


def test_a_cap_below_one_point_bounds_changes_below_one_point():
    small = Params(newcomer_games=5, newcomer_cap=0.5)

    bounded = newcomers_limit(hand_made([0.8, -0.8]), [[NEW], [NEW]], [[0], [0]], small)

    assert [side[0].delta for side in bounded.sides] == [0.5, -0.5]


def test_one_game_makes_a_regular_when_the_rule_counts_one():
    one = Params(newcomer_games=1, newcomer_cap=30.0)

    first = newcomers_limit(hand_made([75.0, -75.0]), [[NEW], [NEW]], [[0], [0]], one)
    second = newcomers_limit(hand_made([75.0, -75.0]), [[NEW], [NEW]], [[1], [0]], one)

    assert [side[0].delta for side in first.sides] == [30.0, -30.0]
    # One game makes the first player a regular: the second meets a regular and moves freely,
    # the first meets a newcomer only and is bounded.
    assert [side[0].delta for side in second.sides] == [30.0, -75.0]
