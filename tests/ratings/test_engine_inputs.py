"""What the engines accept and return at their edges (issue 17's "Also found").

A game dated before a player's clock leaves the clock where it is, so idle time already
counted is never counted twice (docs/rules.md §1); a placement is any integral number.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ratings.engines import ENGINES, Params, RatingState, get_engine

DAY = 86_400.0
LAYOUTS = {"1v1": [1, 1], "teams": [2, 2], "uneven": [1, 3], "free-for-all": [1, 1, 1], "three teams": [2, 2, 1]}


def players(sizes: list[int], as_of: float) -> list[list[RatingState]]:
    rating = iter(range(1400, 1800, 37))
    return [[RatingState(float(next(rating)), 80.0, 0.06, as_of) for _ in range(size)] for size in sizes]


@pytest.mark.parametrize("name", list(ENGINES))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_game_dated_before_a_players_clock_leaves_the_clock_where_it_is(name, layout):
    engine = get_engine(name)
    sides = players(LAYOUTS[layout], 10 * DAY)  # every clock at day 10, by a later game or write-back
    placements = list(range(1, len(sides) + 1))

    result = engine.rate(sides, placements, 5 * DAY)  # a result from day 5, confirmed late

    for side, outcomes in zip(sides, result.sides, strict=True):
        for before, outcome in zip(side, outcomes, strict=True):
            assert outcome.rd_as_of == 10 * DAY
            assert outcome.rd_at_game == before.rd  # no growth back in time
            # No idle time is counted twice: at day 10 the new RD has not grown at all.
            assert engine.rd_at(outcome.after, 10 * DAY) == outcome.rd


@pytest.mark.parametrize("name", list(ENGINES))
def test_a_game_after_the_clock_moves_it_to_the_game(name):
    sides = players([1, 2], 3 * DAY)
    result = get_engine(name).rate(sides, [2, 1], 5 * DAY)
    assert {outcome.rd_as_of for side in result.sides for outcome in side} == {5 * DAY}


INTEGRAL = {
    "NumPy int64": [np.int64(1), np.int64(2)],
    "NumPy int32": [np.int32(2), np.int32(1)],
    "floats": [1.0, 2.0],
    "NumPy float64": [np.float64(1.0), np.float64(1.0)],
}


@pytest.mark.parametrize("name", list(ENGINES))
@pytest.mark.parametrize("kind", list(INTEGRAL))
@pytest.mark.parametrize("sizes", [[1, 1], [2, 3], [1, 1, 1]])
def test_integral_placements_of_any_type_rate_as_plain_ints(name, kind, sizes):
    engine = get_engine(name, Params())
    sides = players(sizes, 0.0)
    given = (INTEGRAL[kind] + [3])[: len(sizes)]
    plain = [int(place) for place in given]

    assert engine.rate(sides, given, DAY) == engine.rate(sides, plain, DAY)


@pytest.mark.parametrize("name", list(ENGINES))
@pytest.mark.parametrize(
    "bad", [1.5, True, math.nan, math.inf, 0, 0.0, -1, "1", None, np.float64(1.5), np.bool_(True)], ids=repr
)
@pytest.mark.parametrize("sizes", [[1, 1], [2, 2, 1]])
def test_a_placement_that_is_not_a_whole_number_of_at_least_1_is_refused(name, bad, sizes):
    sides = players(sizes, 0.0)
    placements = [bad, *range(2, len(sizes) + 1)]
    with pytest.raises(ValueError, match=r"placements\[0\] must be a whole number of at least 1, got "):
        get_engine(name).rate(sides, placements, DAY)


BAD_PLAYERS = {
    "negative RD": (RatingState(1500.0, -80.0), r"\.rd must be above 0, got -80\.0"),
    "zero RD": (RatingState(1500.0, 0.0), r"\.rd must be above 0, got 0\.0"),
    "zero volatility": (RatingState(1500.0, 80.0, 0.0), r"\.volatility must be above 0, got 0\.0"),
    "NaN rating": (RatingState(math.nan, 80.0), r"\.rating must be a finite number, got nan"),
    "infinite clock": (RatingState(1500.0, 80.0, 0.06, math.inf), r"\.rd_as_of must be a finite number, got inf"),
    "plain tuple": ((1500.0, 80.0, 0.06, 0.0), r" must be a RatingState, got tuple"),
}


def every_seat(sizes: list[int]) -> list[tuple[int, int]]:
    return [(side, position) for side, size in enumerate(sizes) for position in range(size)]


@pytest.mark.parametrize("name", list(ENGINES))
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("bad", list(BAD_PLAYERS))
def test_a_bad_player_is_refused_wherever_they_sit(name, layout, bad):
    """``Engine.rate``'s contract: a non-finite or non-positive value is refused, naming the field.

    Every seat of every layout, the second player of a 1 v 1 game as much as the first.
    """
    engine = get_engine(name)
    value, message = BAD_PLAYERS[bad]
    for side, position in every_seat(LAYOUTS[layout]):
        sides = players(LAYOUTS[layout], 0.0)
        sides[side][position] = value
        placements = list(range(1, len(sides) + 1))
        with pytest.raises(ValueError, match=rf"^sides\[{side}\]\[{position}\]{message}$"):
            engine.rate(sides, placements, DAY)


@pytest.mark.parametrize("name", list(ENGINES))
@pytest.mark.parametrize("bad", [1.5, True, math.nan, 0, -1], ids=repr)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_bad_placement_is_refused_wherever_it_stands(name, bad, layout):
    count = len(LAYOUTS[layout])
    for index in range(count):
        placements: list[object] = list(range(1, count + 1))
        placements[index] = bad
        with pytest.raises(ValueError, match=rf"^placements\[{index}\] must be a whole number of at least 1, got "):
            get_engine(name).rate(players(LAYOUTS[layout], 0.0), placements, DAY)


@pytest.mark.parametrize("name", list(ENGINES))
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("at", [math.nan, math.inf, -math.inf], ids=repr)
def test_a_game_at_no_finite_instant_is_refused(name, layout, at):
    sides = players(LAYOUTS[layout], 0.0)
    with pytest.raises(ValueError, match=r"^at must be a finite number, got "):
        get_engine(name).rate(sides, list(range(1, len(sides) + 1)), at)


@pytest.mark.parametrize("name", list(ENGINES))
def test_eight_players_with_numpy_placements_rate_as_with_plain_ints(name):
    """Eight players is the most a game may hold (docs/rules.md §8), whichever check runs."""
    sides = players([4, 4], 0.0)
    engine = get_engine(name)

    assert engine.rate(sides, [np.int64(2), np.int64(1)], DAY) == engine.rate(sides, [2, 1], DAY)


GOOD = RatingState(1500.0, 80.0, 0.06, 0.0)


@pytest.mark.parametrize(
    ("player", "games", "at", "message"),
    [
        (GOOD, [], DAY, r"^games must hold at least one \(opponent, score\) pair, got none$"),
        (GOOD._replace(rd=-1.0), [(GOOD, 1.0)], DAY, r"^player\.rd must be above 0, got -1\.0$"),
        (GOOD, [(GOOD, 1.0)], math.nan, r"^at must be a finite number, got nan$"),
        (
            GOOD,
            [(GOOD, 1.0), (GOOD._replace(rd=0.0), 0.0)],
            DAY,
            r"^games\[1\]\.opponent\.rd must be above 0, got 0\.0$",
        ),
        (GOOD, [(GOOD, math.inf)], DAY, r"^games\[0\]\.score must be a finite number, got inf$"),
        (GOOD, [(GOOD, 1.0), (GOOD, 0.3)], DAY, r"^games\[1\]\.score must be 0, 0\.5 or 1, got 0\.3$"),
    ],
)
def test_a_rating_period_refuses_bad_input_naming_it(player, games, at, message):
    for name in ENGINES:
        with pytest.raises(ValueError, match=message):
            get_engine(name).rate_period(player, games, at)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (GOOD._replace(rd=0.0), r"^sides\[0\]\[0\]\.rd must be above 0, got 0\.0$"),
        (GOOD._replace(volatility=-0.06, rd_as_of=DAY), r"^sides\[0\]\[0\]\.volatility must be above 0, got -0\.06$"),
        (GOOD._replace(rd=math.inf), r"^sides\[0\]\[0\]\.rd must be a finite number, got inf$"),
        (GOOD._replace(volatility=math.inf), r"^sides\[0\]\[0\]\.volatility must be a finite number, got inf$"),
        (GOOD._replace(rating=math.nan), r"^sides\[0\]\[0\]\.rating must be a finite number, got nan$"),
        (GOOD._replace(rd_as_of=-math.inf), r"^sides\[0\]\[0\]\.rd_as_of must be a finite number, got -inf$"),
    ],
)
@pytest.mark.parametrize("layout", ["teams", "uneven", "free-for-all"])
def test_a_game_whose_every_player_is_bad_alike_is_refused_naming_the_first(bad, message, layout):
    sides = [[bad] * size for size in LAYOUTS[layout]]
    placements = list(range(1, len(sides) + 1))
    for name in ENGINES:
        with pytest.raises(ValueError, match=message):
            get_engine(name).rate(sides, placements, 2 * DAY)


@pytest.mark.parametrize("name", sorted(ENGINES))
@pytest.mark.parametrize("player", [0, 1])
@pytest.mark.parametrize(
    ("field", "value"),
    [(1, math.inf), (2, math.inf), (2, 0.0), (2, -0.06), (1, 0.0)],
    ids=["rd inf", "volatility inf", "volatility 0", "volatility below 0", "rd 0"],
)
def test_a_one_v_one_refuses_an_infinite_or_non_positive_rd_or_volatility_on_a_running_clock(
    name, player, field, value
):
    """The 1 v 1 fast path's one-sum check, with clocks past zero: each player's RD and volatility
    are checked on their own, never mistaken for the clock beside them."""
    good = RatingState(1500.0, 80.0, 0.06, 5.0)
    bad = good._replace(**{RatingState._fields[field]: value})
    sides = [[bad], [good]] if player == 0 else [[good], [bad]]

    with pytest.raises(ValueError, match=RatingState._fields[field].replace("_", ".?")):
        get_engine(name, Params()).rate(sides, [1, 2], 10.0)
