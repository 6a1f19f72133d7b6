"""The fairest split and group (ratings/engines/balance.py) against independent brute force.

The oracles label each *player* with a team (``itertools.product``), throw away labellings
that split a party, and rate each survivor from ``pad``/``composite``/``win_probability``
directly, so they share none of the module's subset sums, pruning or tie handling.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ratings.engines.balance import (
    MAX_CANDIDATES,
    Split,
    best_ffa_group,
    best_split,
    best_team_group,
    ffa_expected,
    ffa_unfairness,
    team_win_probability,
)
from ratings.engines.probability import win_probability
from ratings.engines.teams import composite, pad

NULL = {"null_rating": 1.0, "null_rd": 350.0}
members = st.tuples(st.floats(min_value=800, max_value=2600), st.floats(min_value=30, max_value=350))


@st.composite
def unit_lists(draw, min_players=1, max_players=8, max_party=4):
    """Random players cut into random parties of 1 to ``max_party``."""
    players = draw(st.lists(members, min_size=min_players, max_size=max_players))
    units = []
    while players:
        take = draw(st.integers(min_value=1, max_value=min(max_party, len(players))))
        units.append(players[:take])
        players = players[take:]
    return units


def oracle_probability(team_a, team_b):
    size = max(len(team_a), len(team_b))
    sides = []
    for team in (team_a, team_b):
        ratings, rds = pad([r for r, _ in team], [d for _, d in team], size, **NULL)
        sides.append(composite(ratings, rds))
    return win_probability(*sides[0], *sides[1])


def oracle_splits(units, uneven):
    """Every valid split as ``(unfairness, team_a units, team_b units)``, unit 0 on team a."""
    owner = [index for index, unit in enumerate(units) for _ in unit]
    players = [member for unit in units for member in unit]
    splits = []
    for labels in itertools.product((0, 1), repeat=len(players)):
        if labels[0] != 0 or 1 not in labels:
            continue
        if any(
            labels[i] != labels[j] for i in range(len(players)) for j in range(len(players)) if owner[i] == owner[j]
        ):
            continue
        if not uneven and labels.count(0) != labels.count(1):
            continue
        team_a = [p for p, label in zip(players, labels, strict=True) if label == 0]
        team_b = [p for p, label in zip(players, labels, strict=True) if label == 1]
        units_a = sorted({owner[i] for i, label in enumerate(labels) if label == 0})
        units_b = sorted({owner[i] for i, label in enumerate(labels) if label == 1})
        splits.append((abs(oracle_probability(team_a, team_b) - 0.5), tuple(units_a), tuple(units_b)))
    return splits


def assert_valid_split(split, units, uneven):
    assert 0 in split.team_a
    assert sorted(split.team_a + split.team_b) == list(range(len(units)))
    size_a = sum(len(units[i]) for i in split.team_a)
    size_b = sum(len(units[i]) for i in split.team_b)
    assert size_a >= 1 and size_b >= 1
    if not uneven:
        assert size_a == size_b
    team_a = [m for i in split.team_a for m in units[i]]
    team_b = [m for i in split.team_b for m in units[i]]
    assert split.probability == pytest.approx(oracle_probability(team_a, team_b), abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(units=unit_lists(), uneven=st.booleans())
def test_best_split_matches_the_brute_force_oracle(units, uneven):
    total = sum(len(unit) for unit in units)
    if not uneven and any(2 * len(unit) > total for unit in units):
        with pytest.raises(ValueError, match=r"units\[\d+\] must have at most half"):
            best_split(units, uneven=uneven, **NULL)
        return
    splits = oracle_splits(units, uneven)

    split = best_split(units, uneven=uneven, **NULL)

    if not splits:
        assert split is None
        return
    assert split is not None
    assert_valid_split(split, units, uneven)
    assert split.unfairness == pytest.approx(min(s[0] for s in splits), abs=1e-12)


@given(team_a=st.lists(members, min_size=1, max_size=4), team_b=st.lists(members, min_size=1, max_size=4))
def test_swapping_the_teams_gives_the_complement(team_a, team_b):
    forward = team_win_probability(team_a, team_b, **NULL)
    backward = team_win_probability(team_b, team_a, **NULL)

    assert forward + backward == pytest.approx(1.0, abs=1e-12)


def by_hand(team_a, team_b):
    """docs/rules.md §8 then §2, written out with β = 10^(1/400); teams already padded."""
    beta = 10 ** (1 / 400)
    sides = []
    for team in (team_a, team_b):
        total = sum(beta**r for r, _ in team)
        rating = math.log(total / len(team), beta)
        rd = math.sqrt(sum((beta**r / total) ** 2 * d * d for r, d in team))
        sides.append((rating, rd))
    (ra, rda), (rb, rdb) = sides
    q = math.log(10) / 400
    g = 1 / math.sqrt(1 + 3 * q * q * (rda * rda + rdb * rdb) / math.pi**2)
    return 1 / (1 + 10 ** (-g * (ra - rb) / 400))


def test_two_v_two_worked_example():
    strong_weak = [(1500.0, 50.0), (1700.0, 50.0)]
    even = [(1600.0, 50.0), (1600.0, 50.0)]
    expected = by_hand(strong_weak, even)

    probability = team_win_probability(strong_weak, even, **NULL)
    split = best_split([[m] for m in strong_weak + even], uneven=False, **NULL)

    assert probability == pytest.approx(expected, abs=1e-12)
    assert 0.538 < expected < 0.539  # 1500 and 1700 make 1627.3: their power mean beats two 1600s
    assert split == Split((0, 1), (2, 3), probability)


def test_uneven_teams_pad_the_smaller_with_null_players():
    lone = [(1800.0, 60.0)]
    trio = [(1500.0, 80.0), (1500.0, 80.0), (1500.0, 80.0)]
    expected = by_hand([*lone, (1.0, 350.0), (1.0, 350.0)], trio)

    probability = team_win_probability(lone, trio, **NULL)
    split = best_split([lone, *[[m] for m in trio]], uneven=True, **NULL)

    assert probability == pytest.approx(expected, abs=1e-12)
    assert composite([1800.0, 1.0, 1.0], [60.0, 350.0, 350.0])[0] == pytest.approx(1609.16, abs=0.01)
    assert 0.648 < probability < 0.649
    assert split is not None
    assert split.team_a == (0,)  # 1800 with a 1500 would be 1708.02 against 1500: further from ½
    assert split.unfairness == pytest.approx(min(s[0] for s in oracle_splits([lone, *[[m] for m in trio]], True)))


def test_equal_players_break_ties_by_the_smallest_team_a():
    units = [[(1500.0, 50.0)] for _ in range(4)]

    split = best_split(units, uneven=True, **NULL)

    assert split == Split((0, 1), (2, 3), 0.5)


def test_odd_total_has_no_even_split_and_one_unit_none_at_all():
    assert best_split([[(1500.0, 50.0)], [(1500.0, 50.0)], [(1500.0, 50.0)]], uneven=False, **NULL) is None
    assert best_split([[(1500.0, 50.0), (1600.0, 50.0)]], uneven=True, **NULL) is None


@given(players=st.lists(members, min_size=2, max_size=8))
def test_ffa_expected_sums_to_half_the_players(players):
    expected = ffa_expected(players)

    assert math.fsum(expected) == pytest.approx(len(players) / 2, abs=1e-12)
    assert ffa_unfairness(players) == max(
        abs(win_probability(*a, *b) - 0.5) for a, b in itertools.combinations(players, 2)
    )


def test_ffa_unfairness_is_the_most_lopsided_pair():
    players = [(1500.0, 60.0), (1500.0, 60.0), (1700.0, 60.0)]

    assert ffa_unfairness(players) == pytest.approx(win_probability(1700.0, 60.0, 1500.0, 60.0) - 0.5, abs=1e-15)
    assert ffa_expected(players)[2] == pytest.approx(win_probability(1700.0, 60.0, 1500.0, 60.0))


@settings(max_examples=150, deadline=None)
@given(
    anchor=st.lists(members, min_size=1, max_size=2),
    candidates=unit_lists(min_players=0, max_players=10, max_party=3),
    size=st.integers(min_value=2, max_value=8),
)
def test_best_ffa_group_matches_brute_force(anchor, candidates, size):
    if len(anchor) > size or any(len(unit) > size for unit in candidates):
        return
    options = [
        (ffa_unfairness(anchor + [m for i in choice for m in candidates[i]]), choice)
        for count in range(len(candidates) + 1)
        for choice in itertools.combinations(range(len(candidates)), count)
        if len(anchor) + sum(len(candidates[i]) for i in choice) == size
    ]

    found = best_ffa_group(anchor, candidates, size)

    if not options:
        assert found is None
        return
    assert found is not None
    chosen, unfairness = found
    assert list(chosen) == sorted(chosen)
    assert len(anchor) + sum(len(candidates[i]) for i in chosen) == size
    assert unfairness == ffa_unfairness(anchor + [m for i in chosen for m in candidates[i]])
    assert unfairness == pytest.approx(min(o[0] for o in options), abs=1e-12)


@settings(max_examples=120, deadline=None)
@given(
    anchor=st.lists(members, min_size=1, max_size=2),
    candidates=unit_lists(min_players=0, max_players=7, max_party=2),
    size=st.integers(min_value=2, max_value=8),
    uneven=st.booleans(),
)
def test_best_team_group_matches_brute_force(anchor, candidates, size, uneven):
    limit = size - 1 if uneven else size // 2
    if any(len(unit) > limit for unit in [anchor, *candidates]):
        with pytest.raises(ValueError, match=r"(anchor|candidates\[\d+\]) must have at most"):
            best_team_group(anchor, candidates, size, uneven=uneven, **NULL)
        return
    options = [
        split[0]
        for count in range(len(candidates) + 1)
        for choice in itertools.combinations(range(len(candidates)), count)
        if len(anchor) + sum(len(candidates[i]) for i in choice) == size
        for split in oracle_splits([anchor, *[candidates[i] for i in choice]], uneven)
    ]

    found = best_team_group(anchor, candidates, size, uneven=uneven, **NULL)

    if not options:
        assert found is None
        return
    assert found is not None
    chosen, split = found
    group = [anchor, *[candidates[i] for i in chosen]]
    assert list(chosen) == sorted(chosen)
    assert sum(len(unit) for unit in group) == size
    assert_valid_split(split, group, uneven)
    assert split.unfairness == pytest.approx(min(options), abs=1e-12)


def test_best_team_group_picks_the_fairest_four_of_five():
    anchor = [(1500.0, 50.0)]
    candidates = [[(2500.0, 50.0)], [(1500.0, 50.0)], [(1600.0, 50.0)], [(1600.0, 50.0)]]

    found = best_team_group(anchor, candidates, 4, uneven=False, **NULL)

    assert found is not None
    assert found[0] == (1, 2, 3)  # the 2500 stays out
    assert found[1].team_a in ((0, 1), (0, 2), (0, 3))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: best_split([[(1500.0, 50.0)], []], uneven=True, **NULL), r"units\[1\] must hold at least one"),
        (lambda: best_split([], uneven=True, **NULL), r"units must hold at least one unit"),
        (
            lambda: best_split([[(1500.0, 50.0)] * 3, [(1500.0, 50.0)]], uneven=False, **NULL),
            r"units\[0\] must have at most half",
        ),
        (lambda: best_split([[(1500.0, 50.0)]] * 9, uneven=True, **NULL), r"units must hold at most 8 players"),
        (lambda: best_split([[(math.nan, 50.0)], [(1500.0, 50.0)]], uneven=True, **NULL), r"units\[0\]\[0\] rating"),
        (lambda: best_split([[(1500.0, 0.0)], [(1500.0, 50.0)]], uneven=True, **NULL), r"units\[0\]\[0\] rd"),
        (lambda: best_split([[(1500.0, 50.0)]] * 2, uneven=True, null_rating=1.0, null_rd=-1.0), r"null_rd"),
        (lambda: best_split([[(1500.0, math.inf)]] * 2, uneven=True, **NULL), r"units\[0\]\[0\] rd"),
        (lambda: team_win_probability([], [(1500.0, 50.0)], **NULL), r"team_a must hold at least one"),
        (lambda: ffa_unfairness([(1500.0, 50.0)]), r"members must hold 2 to 8 players"),
        (lambda: ffa_expected([(1500.0, 50.0)] * 9), r"members must hold 2 to 8 players"),
        (lambda: best_ffa_group([(1500.0, 50.0)], [], 1), r"size must be a whole number from 2 to 8"),
        (lambda: best_ffa_group([(1500.0, 50.0)], [], 9), r"size must be a whole number from 2 to 8"),
        (lambda: best_ffa_group([(1500.0, 50.0)] * 3, [], 2), r"anchor must have at most 2 players"),
        (
            lambda: best_ffa_group([(1500.0, 50.0)], [[(1500.0, 50.0)]] * (MAX_CANDIDATES + 1), 4),
            r"candidates must hold at most 12 units",
        ),
        (
            lambda: best_team_group([(1500.0, 50.0)], [[(1500.0, 50.0)] * 3], 4, uneven=False, **NULL),
            r"candidates\[0\] must have at most 2 players",
        ),
        (
            lambda: best_team_group([(1500.0, 50.0)] * 3, [], 4, uneven=False, **NULL),
            r"anchor must have at most 2 players",
        ),
        (
            lambda: best_team_group([(1500.0, 50.0)], [[(1500.0, -5.0)]], 2, uneven=False, **NULL),
            r"candidates\[0\]\[0\] rd must be above 0",
        ),
        (lambda: team_win_probability([(1500.0, 50.0)], [], **NULL), r"^team_b must hold at least one"),
        (
            lambda: team_win_probability([(1500.0, 50.0, 0.06)], [(1500.0, 50.0)], **NULL),
            r"^team_a\[0\] must be a \(rating, rd\) pair, got \(1500\.0, 50\.0, 0\.06\)$",
        ),
        (lambda: team_win_probability(*[[(1500.0, 50.0)]] * 2, beta=0.0, **NULL), r"^beta must be above 0, got 0\.0"),
        (
            lambda: team_win_probability(*[[(1500.0, 50.0)]] * 2, null_rating=math.nan, null_rd=350.0),
            r"^null_rating must be a finite number",
        ),
        (
            lambda: team_win_probability(*[[(1500.0, 50.0)]] * 2, null_rating=1.0, null_rd=0.0),
            r"^null_rd must be above 0, got 0\.0",
        ),
        (
            lambda: best_split([[(1500.0, 50.0)]] * 2, uneven=True, null_rating=math.inf, null_rd=350.0),
            r"^null_rating must be a finite number",
        ),
        (
            lambda: best_split([[(1500.0, 50.0)]] * 2, uneven=True, null_rating=1.0, null_rd=0.0),
            r"^null_rd must be above 0, got 0\.0",
        ),
        (
            lambda: best_split([[(1500.0, 50.0)]] * 2, uneven=True, beta=-175.0, **NULL),
            r"^beta must be above 0, got -175\.0",
        ),
        (
            lambda: best_team_group([(1500.0, 50.0)], [[(1500.0, 50.0)]], 2, uneven=True, beta=0.0, **NULL),
            r"^beta must be above 0, got 0\.0",
        ),
        (
            lambda: best_team_group(
                [(1500.0, 50.0)], [[(1500.0, 50.0)]], 2, uneven=False, null_rating=math.nan, null_rd=350.0
            ),
            r"^null_rating must be a finite number",
        ),
        (
            lambda: best_team_group(
                [(1500.0, 50.0)], [[(1500.0, 50.0)]], 2, uneven=False, null_rating=1.0, null_rd=0.0
            ),
            r"^null_rd must be above 0, got 0\.0",
        ),
        (  # one unit: no split to rate, the refusal is best_split's own
            lambda: best_split([[(1500.0, 50.0)]], uneven=True, null_rating=1.0, null_rd=0.0),
            r"^null_rd must be above 0, got 0\.0",
        ),
        (  # one unit: no split to rate, the refusal is the split search's own
            lambda: best_split([[(1500.0, 50.0)]], uneven=True, beta=0.0, **NULL),
            r"^beta must be above 0, got 0\.0",
        ),
        (  # an odd game of even teams: no game to rate, the refusal is best_team_group's own
            lambda: best_team_group(
                [(1500.0, 50.0)], [[(1500.0, 50.0)]] * 2, 3, uneven=False, null_rating=1.0, null_rd=-1.0
            ),
            r"^null_rd must be above 0, got -1\.0",
        ),
        (lambda: best_ffa_group([(math.nan, 50.0)], [[(1500.0, 50.0)]], 2), r"^anchor\[0\] rating must be a finite"),
        (
            lambda: best_ffa_group([(1500.0, 50.0)], [[(1500.0, 50.0)]], 2.0),
            r"^size must be a whole number from 2 to 8, got 2\.0$",
        ),
        (
            lambda: best_ffa_group([(1500.0, 50.0)], [[(1500.0, 50.0)] * 3], 2),
            r"^candidates\[0\] must have at most 2 players, got 3$",
        ),
        (
            lambda: best_split([[(1.0, 50.0)], [(50_001.5, 50.0)]], uneven=True, **NULL),
            r"^ratings and null_rating must lie within 50000 points of each other, got 1\.0 to 50001\.5$",
        ),
    ],
)
def test_bad_input_is_refused_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_twelve_candidates_and_ratings_50000_points_apart_are_accepted():
    """The limits themselves are allowed: ``MAX_CANDIDATES`` units, a spread of ``RATING_SPREAD_LIMIT``."""
    found = best_ffa_group([(1500.0, 50.0)], [[(1500.0, 50.0)]] * MAX_CANDIDATES, 2)
    split = best_split([[(1.0, 50.0)], [(50_001.0, 50.0)]], uneven=True, **NULL)

    assert found == ((0,), 0.0)
    assert split is not None and split.probability < 1e-100  # team a is the player rated 1


@settings(max_examples=60, deadline=None)
@given(units=unit_lists(min_players=2, max_players=6, max_party=2), uneven=st.booleans())
def test_moving_every_rating_and_the_null_rating_alike_keeps_the_split(units, uneven):
    """Only rating differences count (docs/rules.md §2, §8): far from the origin the same split wins."""
    total = sum(len(unit) for unit in units)
    if not uneven and any(2 * len(unit) > total for unit in units):
        return
    shift = 30_000.0
    moved = [[(rating + shift, rd) for rating, rd in unit] for unit in units]
    null_near = {"null_rating": 1400.0, "null_rd": 200.0}
    here = best_split(units, uneven=uneven, **null_near)

    there = best_split(moved, uneven=uneven, null_rating=1400.0 + shift, null_rd=200.0)

    if here is None:
        assert there is None
        return
    assert there is not None
    assert (there.team_a, there.team_b) == (here.team_a, here.team_b)
    assert there.probability == pytest.approx(here.probability, abs=1e-9)
