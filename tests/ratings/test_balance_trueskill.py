"""The queue's fairness search for a TrueSkill ladder (docs/rules.md §13, §20).

A TrueSkill team is the sum of its members' performances, so the search weighs a game by
TrueSkill's own win chance; these tests check the fast search against trying every group
and split, and the chances against the engine's.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from ratings.engines import Params, RatingState, get_engine
from ratings.engines.balance import (
    best_ffa_group,
    best_split,
    best_team_group,
    ffa_expected,
    pair_win_probability,
    rating_gap_for_probability,
    summed_win_probability,
    team_win_probability,
)

BETA = 175.0


def brute_team_group(units, size, uneven):
    """The least |P − ½| over every group holding unit 0 and every split, by enumeration."""
    best = None
    for count in range(1, len(units)):
        for chosen in itertools.combinations(range(1, len(units)), count):
            group = (0, *chosen)
            if sum(len(units[i]) for i in group) != size:
                continue
            for take in range(1, len(group)):
                for team_a in itertools.combinations(group, take):
                    if 0 not in team_a:
                        continue
                    team_b = [i for i in group if i not in team_a]
                    a = [m for i in team_a for m in units[i]]
                    b = [m for i in team_b for m in units[i]]
                    if not uneven and len(a) != len(b):
                        continue
                    unfairness = abs(summed_win_probability(a, b, BETA) - 0.5)
                    best = unfairness if best is None else min(best, unfairness)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_the_search_finds_the_fairest_trueskill_game(seed):
    rng = random.Random(seed)
    units = [[(rng.gauss(1500, 250), rng.uniform(40, 350))] for _ in range(rng.randint(3, 9))]
    if rng.random() < 0.3:  # a party of two
        units[1] = [*units[1], (rng.gauss(1500, 250), rng.uniform(40, 350))]
    players = sum(len(unit) for unit in units)
    size = rng.randint(2, min(8, players))
    uneven = rng.random() < 0.5
    if not uneven and size % 2:
        size -= 1
    if any(len(unit) > (size - 1 if uneven else size // 2) for unit in units):
        return

    found = best_team_group(units[0], units[1:], size, uneven=uneven, null_rating=1.0, null_rd=350.0, beta=BETA)
    expected = brute_team_group(units, size, uneven)

    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert found[1].unfairness == pytest.approx(expected, abs=1e-12)
        group = [units[0], *(units[i + 1] for i in found[0])]
        a = [m for i in found[1].team_a for m in group[i]]
        b = [m for i in found[1].team_b for m in group[i]]
        assert found[1].probability == summed_win_probability(a, b, BETA)


def test_trueskill_weighs_uneven_teams_by_their_sums_not_padded_composites():
    """One strong player against two average ones: TrueSkill sums, the Glicko family pads."""
    lone = [(2300.0, 60.0)]
    pair = [(1500.0, 60.0), (1500.0, 60.0)]

    summed = team_win_probability(lone, pair, null_rating=1.0, null_rd=350.0, beta=BETA)
    padded = team_win_probability(lone, pair, null_rating=1.0, null_rd=350.0)

    # Σμ from TrueSkill's zero (rating 450): 1850 against 2100, so the pair is the favourite;
    # padded with a null player, the lone player is.
    assert summed < 0.5 < padded
    assert summed == pytest.approx(0.5 * math.erfc(250.0 / math.sqrt(3 * BETA**2 + 3 * 60.0**2) / math.sqrt(2.0)))


def test_best_split_with_beta_tries_every_split():
    units = [[(1700.0, 80.0)], [(1600.0, 90.0)], [(1450.0, 200.0)], [(1400.0, 60.0)]]

    split = best_split(units, uneven=False, null_rating=1.0, null_rd=350.0, beta=BETA)

    assert split is not None
    assert (split.team_a, split.team_b) == ((0, 3), (1, 2))  # 3100 against 3050
    assert split.probability == summed_win_probability([units[0][0], units[3][0]], [units[1][0], units[2][0]], BETA)


def test_a_free_for_all_is_weighed_by_trueskill_pairs():
    players = [(1600.0, 80.0), (1500.0, 120.0), (1450.0, 60.0), (1300.0, 200.0)]

    chances = ffa_expected(players, BETA)

    for index, chance in enumerate(chances):
        pairs = [pair_win_probability(players[index], other, BETA) for j, other in enumerate(players) if j != index]
        assert chance == pytest.approx(sum(pairs) / 3)
    assert math.fsum(chances) == pytest.approx(2.0)
    found = best_ffa_group([players[0]], [[p] for p in players[1:]], 3, BETA)
    assert found is not None and found[0] == (0, 1)  # 1600, 1500, 1450: the closest trio with the anchor


@pytest.mark.parametrize("probability", [0.05, 0.15, 0.3, 0.5, 0.7, 0.85])
def test_the_window_gap_inverts_the_trueskill_chance(probability):
    gap = rating_gap_for_probability(probability, 80.0, 350.0, BETA)

    assert pair_win_probability((1500.0 + gap, 80.0), (1500.0, 350.0), BETA) == pytest.approx(probability)


def test_the_window_gap_refuses_a_certain_result():
    with pytest.raises(ValueError, match="probability must be strictly between 0 and 1"):
        rating_gap_for_probability(1.0, 80.0, 350.0, BETA)


def test_the_queue_and_the_trueskill_engine_agree_on_every_chance():
    engine = get_engine("trueskill", Params(beta=BETA, sc=5.0))
    at = 10 * 86_400.0
    rng = random.Random(7)
    for _ in range(50):
        sizes = (rng.randint(1, 4), rng.randint(1, 4))
        sides = [
            [RatingState(rng.gauss(1500, 200), rng.uniform(40, 300), 0.06, rng.uniform(0, at)) for _ in range(n)]
            for n in sizes
        ]
        members = [[(state.rating, engine.rd_at(state, at)) for state in side] for side in sides]

        assert engine.summed_beta == BETA
        assert team_win_probability(
            members[0], members[1], null_rating=1.0, null_rd=350.0, beta=engine.summed_beta
        ) == pytest.approx(engine.win_probability(sides[0], sides[1], at), rel=1e-12)
