"""Every engine constant refuses a bad value with a message naming it (``ratings.engines.values.Params``).

A table of each field's bad values and the exact message: a check left out, a bound moved, a
field named wrongly or a message dropped fails here (``make mutate`` runs it).
"""

from __future__ import annotations

import math
import re

import pytest

from ratings.engines import Params

NONNEGATIVE = ["sc", "c", "dynamics", "draw_probability"]
POSITIVE = ["rd_max", "tau", "k", "initial_rd", "period_days", "beta", "newcomer_cap"]
NUMBERS = [*NONNEGATIVE, *POSITIVE, "luck_p", "null_rating"]


@pytest.mark.parametrize("field", NUMBERS)
@pytest.mark.parametrize(
    ("value", "says"),
    [("20", "must be a number"), (True, "must be a number"), (None, "must be a number"),
     (math.nan, "must be a finite number"), (math.inf, "must be a finite number")],
)  # fmt: skip
def test_each_number_must_be_a_finite_number(field, value, says):
    with pytest.raises(ValueError, match=f"^{field} {says}, got {re.escape(repr(value))}$"):
        Params(**{field: value})


@pytest.mark.parametrize("field", POSITIVE)
@pytest.mark.parametrize("value", [0.0, -1.0])
def test_these_must_be_above_zero(field, value):
    with pytest.raises(ValueError, match=f"^{field} must be above 0, got {value!r}$"):
        Params(**{field: value})


@pytest.mark.parametrize("field", NONNEGATIVE)
def test_these_may_be_zero_but_not_below(field):
    Params(**{field: 0.0})
    with pytest.raises(ValueError, match=f"^{field} must be at least 0, got -0.5$"):
        Params(**{field: -0.5})


def test_the_optional_rds_are_checked_when_given():
    assert Params(null_rd=None, rd_min=None).null_player_rd == 350.0
    assert Params(null_rd=80.0).null_player_rd == 80.0
    with pytest.raises(ValueError, match=r"^null_rd must be above 0, got 0.0$"):
        Params(null_rd=0.0)
    with pytest.raises(ValueError, match=r"^null_rd must be a number, got 'x'$"):
        Params(null_rd="x")
    Params(rd_min=0.0)
    Params(rd_min=350.0)
    with pytest.raises(ValueError, match=r"^rd_min must be at least 0, got -1.0$"):
        Params(rd_min=-1.0)
    with pytest.raises(ValueError, match=r"^rd_min must be a finite number, got nan$"):
        Params(rd_min=math.nan)
    with pytest.raises(ValueError, match=r"^rd_min must be at most rd_max \(300\), got 300.5$"):
        Params(rd_max=300.0, rd_min=300.5)


def test_luck_p_is_between_five_sixths_and_one():
    Params(luck_p=5.0 / 6.0)
    Params(luck_p=1.0)
    for bad in (0.8, 1.01):
        with pytest.raises(
            ValueError,
            match=rf"^luck_p must be between 5/6 and 1 \(below 5/6 an upset winner would lose rating\), got {bad!r}$",
        ):
            Params(luck_p=bad)


def test_team_delta_draw_probability_and_newcomer_games():
    for mode in ("own", "shared", "bayes"):
        Params(team_delta=mode)
    with pytest.raises(ValueError, match=r"^team_delta must be 'own', 'shared' or 'bayes', got 'all'$"):
        Params(team_delta="all")
    Params(draw_probability=0.999)
    with pytest.raises(ValueError, match=r"^draw_probability must be below 1 \(every game a draw\), got 1.0$"):
        Params(draw_probability=1.0)
    Params(newcomer_games=0)
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match=rf"^newcomer_games must be a whole number of games from 0, got {bad!r}$"):
            Params(newcomer_games=bad)
