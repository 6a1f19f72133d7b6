"""Which game the queue forms when games are close (ratings/engines/balance.py).

The docstrings promise an order among games within ``TIE`` of the least unfairness:
``best_split`` takes the more even head counts, then the smallest ``team_a``;
``best_team_group`` the more even head counts, then the smallest choice of candidates, then
the smallest ``team_a``; ``best_ffa_group`` the smallest choice. Players drawn from a few
ratings and RDs make such ties common. And a close call between two games is decided by the
win chance with its RD discount (docs/rules.md §2's G), not by the rating gap alone.

The oracles find the promised game by enumerating every game and rating each one with the
formulas of docs/rules.md §2, §8 and §20 written out again (``tests/ratings/test_balance.py``'s
``oracle_probability`` and ``statistics.NormalDist``), with none of the module's subset sums,
bounds or pruning.
"""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ratings.engines.balance import best_ffa_group, best_split, best_team_group
from ratings.engines.probability import win_probability
from ratings.engines.teams import composite, pad
from ratings.engines.values import TRUESKILL_ORIGIN
from tests.ratings.test_balance import NULL, oracle_probability

BETA = 175.0
TIED = 1e-10  # the oracle's and the module's roundings of one probability differ by far less
APART = 1e-7  # and games that are not tied here differ by far more: no example sits between

# Few distinct players, so that many games are exactly as fair as each other.
players = st.tuples(st.sampled_from([1400.0, 1500.0, 1600.0]), st.sampled_from([50.0, 200.0]))
betas = st.sampled_from([None, BETA])


@st.composite
def parties(draw, min_units, max_units, max_party):
    """Units of 1 to ``max_party`` players drawn from ``players``."""
    count = draw(st.integers(min_value=min_units, max_value=max_units))
    return [draw(st.lists(players, min_size=1, max_size=max_party)) for _ in range(count)]


def summed_probability(team_a, team_b, beta):
    """docs/rules.md §20: ``Φ((Σμa − Σμb)/sqrt(n·β² + Σσ²))``, μ counted from rating 450."""
    level = sum(r - TRUESKILL_ORIGIN for r, _ in team_a) - sum(r - TRUESKILL_ORIGIN for r, _ in team_b)
    variance = sum(d * d for _, d in (*team_a, *team_b)) + (len(team_a) + len(team_b)) * beta * beta
    return NormalDist().cdf(level / math.sqrt(variance))


def unfairness(team_a, team_b, beta):
    probability = oracle_probability(team_a, team_b) if beta is None else summed_probability(team_a, team_b, beta)
    return abs(probability - 0.5)


def every_split(units, uneven, beta):
    """``(unfairness, |na − nb|, team_a, team_b)`` of every split with unit 0 on team a."""
    splits = []
    others = range(1, len(units))
    for count in range(len(units) - 1):
        for extra in itertools.combinations(others, count):
            team_a = (0, *extra)
            team_b = tuple(index for index in others if index not in extra)
            members_a = [member for index in team_a for member in units[index]]
            members_b = [member for index in team_b for member in units[index]]
            if not uneven and len(members_a) != len(members_b):
                continue
            imbalance = abs(len(members_a) - len(members_b))
            splits.append((unfairness(members_a, members_b, beta), imbalance, team_a, team_b))
    return splits


def promised(games, key):
    """The game the tie-break ``key`` picks among those tied with the fairest."""
    least = min(game[0] for game in games)
    assume(all(game[0] - least <= TIED or game[0] - least >= APART for game in games))
    return min((game for game in games if game[0] - least <= TIED), key=key)


@settings(max_examples=200, deadline=None)
@given(units=parties(2, 6, 2), uneven=st.booleans(), beta=betas)
def test_best_split_breaks_ties_by_head_counts_then_the_smallest_team_a(units, uneven, beta):
    total = sum(len(unit) for unit in units)
    assume(sum(len(unit) for unit in units) <= 8)
    assume(uneven or all(2 * len(unit) <= total for unit in units))
    splits = every_split(units, uneven, beta)
    assume(splits)
    _, _, team_a, team_b = promised(splits, key=lambda split: (split[1], split[2]))

    split = best_split(units, uneven=uneven, beta=beta, **NULL)

    assert split is not None
    assert (split.team_a, split.team_b) == (team_a, team_b)


def test_equal_players_in_uneven_teams_play_two_against_two():
    """Every split of four equal players is a coin toss with padding too: the even one wins."""
    units = [[(1500.0, 50.0)], [(1500.0, 50.0)], [(1500.0, 50.0)], [(1500.0, 50.0)]]
    splits = every_split(units, True, None)
    assert {round(split[0], 12) for split in splits if split[1] == 0} == {0.0}

    split = best_split(units, uneven=True, **NULL)

    assert split is not None
    assert (split.team_a, split.team_b) == ((0, 1), (2, 3))


@settings(max_examples=150, deadline=None)
@given(
    anchor=st.lists(players, min_size=1, max_size=2),
    candidates=parties(0, 6, 2),
    size=st.integers(min_value=2, max_value=8),
    uneven=st.booleans(),
    beta=betas,
)
def test_best_team_group_breaks_ties_by_head_counts_then_choice_then_team_a(anchor, candidates, size, uneven, beta):
    limit = size - 1 if uneven else size // 2
    assume(all(len(unit) <= limit for unit in [anchor, *candidates]))
    games = []
    for count in range(len(candidates) + 1):
        for choice in itertools.combinations(range(len(candidates)), count):
            group = [anchor, *(candidates[index] for index in choice)]
            if sum(len(unit) for unit in group) != size:
                continue
            for fairness, imbalance, team_a, team_b in every_split(group, uneven, beta):
                games.append((fairness, imbalance, choice, team_a, team_b))
    assume(games)
    _, _, choice, team_a, team_b = promised(games, key=lambda game: (game[1], game[2], game[3]))

    found = best_team_group(anchor, candidates, size, uneven=uneven, beta=beta, **NULL)

    assert found is not None
    assert (found[0], found[1].team_a, found[1].team_b) == (choice, team_a, team_b)


@settings(max_examples=150, deadline=None)
@given(
    anchor=st.lists(players, min_size=1, max_size=2),
    candidates=parties(0, 7, 2),
    size=st.integers(min_value=2, max_value=8),
    beta=betas,
)
def test_best_ffa_group_breaks_ties_by_the_smallest_choice(anchor, candidates, size, beta):
    assume(len(anchor) <= size and all(len(unit) <= size for unit in candidates))
    groups = []
    for count in range(len(candidates) + 1):
        for choice in itertools.combinations(range(len(candidates)), count):
            members = anchor + [member for index in choice for member in candidates[index]]
            if len(members) != size:
                continue
            worst = max(unfairness([a], [b], beta) for a, b in itertools.combinations(members, 2))
            groups.append((worst, choice))
    assume(groups)
    _, choice = promised(groups, key=lambda group: group[1])

    found = best_ffa_group(anchor, candidates, size, beta)

    assert found is not None
    assert found[0] == choice


def composite_gap(team_a, team_b):
    """|Ra − Rb| of the two padded composites (docs/rules.md §8), without any RD discount."""
    size = max(len(team_a), len(team_b))
    (rating_a, _), (rating_b, _) = (
        composite(*pad([r for r, _ in team], [d for _, d in team], size, **NULL)) for team in (team_a, team_b)
    )
    return abs(rating_a - rating_b)


# Two players everyone is sure of (RD 40) and two nobody is (RD 350).
SURE_AND_UNSURE = [[(1350.0, 40.0)], [(1300.0, 350.0)], [(1700.0, 40.0)], [(1300.0, 350.0)]]


def test_the_fairest_split_weighs_the_rating_gap_by_the_teams_rds():
    """The sure pair against the unsure pair is the widest gap but, discounted by G, the fairest game."""
    units = SURE_AND_UNSURE
    splits = every_split(units, False, None)
    fairest = min(splits)
    narrowest = min(
        splits,
        key=lambda split: composite_gap(
            [m for i in split[2] for m in units[i]], [m for i in split[3] for m in units[i]]
        ),
    )
    assert fairest[2] != narrowest[2]  # the gap alone would choose another game
    assert sorted(split[0] for split in splits)[1] - fairest[0] > 1e-3  # and no near tie decides it

    split = best_split(units, uneven=False, **NULL)
    found = best_team_group(units[0], units[1:], 4, uneven=False, **NULL)

    assert split is not None and (split.team_a, split.team_b) == (fairest[2], fairest[3])
    assert found is not None and found[0] == (0, 1, 2)
    assert (found[1].team_a, found[1].team_b) == (fairest[2], fairest[3])


# Null players near the players' own ratings weigh in a padded team; with RD 50 they tie
# with the players often, so uneven games tie with even ones; with RD 600 their spread
# dominates the padded team's RD.
near_nulls = st.sampled_from(
    [
        {"null_rating": 1500.0, "null_rd": 50.0},
        {"null_rating": 1450.0, "null_rd": 200.0},
        {"null_rating": 1550.0, "null_rd": 600.0},
    ]
)


def padded_unfairness(team_a, team_b, null):
    """docs/rules.md §8 then §2: pad the smaller team with ``null`` players, composites, win chance."""
    size = max(len(team_a), len(team_b))
    sides = [composite(*pad([r for r, _ in team], [d for _, d in team], size, **null)) for team in (team_a, team_b)]
    return abs(win_probability(*sides[0], *sides[1]) - 0.5)


def padded_splits(units, uneven, null):
    """``every_split`` with the given null players."""
    splits = []
    others = range(1, len(units))
    for count in range(len(units) - 1):
        for extra in itertools.combinations(others, count):
            team_a = (0, *extra)
            team_b = tuple(index for index in others if index not in extra)
            members_a = [member for index in team_a for member in units[index]]
            members_b = [member for index in team_b for member in units[index]]
            if not uneven and len(members_a) != len(members_b):
                continue
            imbalance = abs(len(members_a) - len(members_b))
            splits.append((padded_unfairness(members_a, members_b, null), imbalance, team_a, team_b))
    return splits


@settings(max_examples=200, deadline=None)
@given(units=parties(2, 6, 3), null=near_nulls)
def test_null_players_near_the_players_decide_uneven_splits_as_padding_says(units, null):
    """The padded side's power and spread include its null players exactly as ``pad`` adds them."""
    assume(sum(len(unit) for unit in units) <= 8)
    splits = padded_splits(units, True, null)
    assume(splits)
    _, _, team_a, team_b = promised(splits, key=lambda split: (split[1], split[2]))

    split = best_split(units, uneven=True, **null)

    assert split is not None
    assert (split.team_a, split.team_b) == (team_a, team_b)


@settings(max_examples=150, deadline=None)
@given(
    anchor=st.lists(players, min_size=1, max_size=2),
    candidates=parties(0, 6, 2),
    size=st.integers(min_value=2, max_value=8),
    null=near_nulls,
)
def test_null_players_near_the_players_decide_uneven_groups_as_padding_says(anchor, candidates, size, null):
    assume(all(len(unit) <= size - 1 for unit in [anchor, *candidates]))
    games = []
    for count in range(len(candidates) + 1):
        for choice in itertools.combinations(range(len(candidates)), count):
            group = [anchor, *(candidates[index] for index in choice)]
            if sum(len(unit) for unit in group) != size:
                continue
            for fairness, imbalance, team_a, team_b in padded_splits(group, True, null):
                games.append((fairness, imbalance, choice, team_a, team_b))
    assume(games)
    _, _, choice, team_a, team_b = promised(games, key=lambda game: (game[1], game[2], game[3]))

    found = best_team_group(anchor, candidates, size, uneven=True, **null)

    assert found is not None
    assert (found[0], found[1].team_a, found[1].team_b) == (choice, team_a, team_b)


@pytest.mark.parametrize("beta", [None, BETA])
def test_four_equal_players_play_two_against_two_when_one_against_three_is_as_fair(beta):
    """Null players equal to the players, or TrueSkill's sums at μ = 0 (rating 450): 1 v 3 is a coin toss too."""
    four = [[(1500.0 if beta is None else TRUESKILL_ORIGIN, 50.0)] for _ in range(4)]
    null = {"null_rating": 1500.0, "null_rd": 50.0}
    splits = padded_splits(four, True, null) if beta is None else every_split(four, True, beta)
    assert all(split[0] < TIED for split in splits) and {split[1] for split in splits} == {0, 2}

    split = best_split(four, uneven=True, beta=beta, **null)
    found = best_team_group(four[0], four[1:], 4, uneven=True, beta=beta, **null)

    assert split is not None and (split.team_a, split.team_b) == ((0, 1), (2, 3))
    assert found is not None and found[0] == (0, 1, 2)
    assert (found[1].team_a, found[1].team_b) == ((0, 1), (2, 3))


def test_a_trueskill_free_for_all_weighs_pairs_by_trueskill_not_by_glicko():
    """Φ(Δ/sqrt(2β² + σ²…)) and docs/rules.md §2's G weigh an unsure opponent differently."""
    anchor = [(1500.0, 30.0)]
    sure, unsure = [(1560.0, 30.0)], [(1600.0, 350.0)]
    by_glicko = [abs(oracle_probability(anchor, other) - 0.5) for other in (sure, unsure)]
    by_trueskill = [unfairness(anchor, other, BETA) for other in (sure, unsure)]
    assert by_glicko[0] < by_glicko[1] and by_trueskill[1] < by_trueskill[0]

    assert best_ffa_group(anchor, [sure, unsure], 2) == ((0,), by_glicko[0])
    found = best_ffa_group(anchor, [sure, unsure], 2, BETA)
    assert found is not None and found[0] == (1,)
    assert found[1] == pytest.approx(by_trueskill[1], abs=TIED)


def test_an_unsure_null_player_decides_which_uneven_split_is_fairest():
    """A null player of RD 600 widens the padded team's RD (docs/rules.md §8): here that picks the game."""
    units = [[(1500.0, 200.0)], [(1600.0, 50.0)], [(1700.0, 50.0)], [(1500.0, 200.0)]]
    unsure, sure = {"null_rating": 1500.0, "null_rd": 600.0}, {"null_rating": 1500.0, "null_rd": 1e-6}
    fairest = min(padded_splits(units, True, unsure))
    assert fairest[2:] == ((0, 2, 3), (1,))
    assert min(padded_splits(units, True, sure))[2:] == ((0, 1, 3), (2,))  # the null's RD decides

    split = best_split(units, uneven=True, **unsure)

    assert split is not None and (split.team_a, split.team_b) == ((0, 2, 3), (1,))
    assert split.unfairness == pytest.approx(fairest[0], abs=TIED)
