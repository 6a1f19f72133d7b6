"""Free-for-all pods and placement points, groups then playoffs, and Kaggle's competition
points (tournaments.formats.ffa, .groups, .points)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.formats import (
    Entrant,
    Pod,
    PointsRule,
    bracket_progress,
    competition_points,
    ffa_pods,
    ffa_seating,
    ffa_standings,
    placement_points,
    playable_games,
    playoff_seeds,
    pod_places,
    single_elimination,
    snake_groups,
)


def test_ffa_pods_seat_by_rating_in_even_pods():
    entrants = [Entrant(id, 3000 - id) for id in range(1, 18)]

    pods = ffa_pods(entrants)

    # 17 entrants, at most 8 a pod: three pods of 6, 6, 5, the strongest together.
    assert pods == [list(range(1, 7)), list(range(7, 13)), list(range(13, 18))]


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 200), st.integers(2, 4), st.integers(0, 4))
def test_ffa_pods_sizes_differ_by_one_at_most_within_bounds(count, smallest, extra):
    largest = min(8, max(smallest, 2 * smallest - 1 + extra))
    entrants = [Entrant(id, 1500.0) for id in range(count)]
    if count < smallest:
        return

    pods = ffa_pods(entrants, smallest=smallest, largest=largest)

    sizes = [len(pod) for pod in pods]
    assert sorted(entrant for pod in pods for entrant in pod) == list(range(count))
    assert max(sizes) - min(sizes) <= 1
    assert smallest <= min(sizes) and max(sizes) <= largest
    assert len(pods) == math.ceil(count / largest), "as few pods as possible"


def test_ffa_pods_refuse_a_field_that_does_not_fit():
    with pytest.raises(ValueError, match="2 entrants cannot be seated in pods of 3 to 8"):
        ffa_pods([Entrant(1, 1500), Entrant(2, 1500)])
    with pytest.raises(ValueError, match="7 entrants cannot be seated in pods of 4 to 5"):
        ffa_pods([Entrant(id, 1500) for id in range(7)], smallest=4, largest=5)
    with pytest.raises(ValueError, match="pod sizes must satisfy"):
        ffa_pods([Entrant(1, 1500)], smallest=3, largest=9)


def test_placement_points_step_evenly_from_a_win_to_a_loss():
    rule = PointsRule()

    assert [placement_points(place, 4, rule) for place in (1, 2, 3, 4)] == pytest.approx([1, 2 / 3, 1 / 3, 0])
    # Two share 2nd and 3rd of four: each the mean of ⅔ and ⅓.
    assert placement_points(2.5, 4, rule) == pytest.approx(0.5)
    assert placement_points(1, 8, PointsRule(win=3, loss=1, draw=2)) == 3
    with pytest.raises(ValueError, match="place must be between 1 and pod_size"):
        placement_points(5, 4, rule)


def test_snake_groups_deal_in_a_serpentine():
    assert snake_groups([1, 2, 3, 4, 5, 6, 7, 8], 2) == [[1, 4, 5, 8], [2, 3, 6, 7]]
    assert snake_groups(list(range(1, 10)), 3) == [[1, 6, 7], [2, 5, 8], [3, 4, 9]]
    with pytest.raises(ValueError, match="groups must be between 1 and the number of seeds"):
        snake_groups([1, 2], 3)


def meeting_round(seeds: list[int], x: int, y: int) -> int:
    """The round in which x and y meet when both win every game before it."""
    bracket = single_elimination(seeds)
    winners: dict[str, int] = {}
    while playable := playable_games(bracket, winners):
        progress = bracket_progress(bracket, winners)
        for key in playable:
            a, b = progress[key]
            if {a, b} == {x, y}:
                return bracket.game(key).round
            winners[key] = a if a in (x, y) else b if b in (x, y) else a
    raise AssertionError("never met")


def test_playoff_seeds_keep_a_groups_entrants_apart():
    standings = [[11, 12, 13], [21, 22, 23], [31, 32, 33], [41, 42, 43]]

    seeds = playoff_seeds(standings, 2)

    assert seeds[:4] == [11, 21, 31, 41], "group winners first"
    for group in standings:
        assert meeting_round(seeds, group[0], group[1]) == 3, "a group's two meet only in the final"


def test_playoff_seeds_of_two_groups_put_the_runners_up_in_the_other_half():
    seeds = playoff_seeds([[1, 2], [3, 4]], 2)

    assert seeds == [1, 3, 2, 4]
    assert meeting_round(seeds, 1, 2) == 2 and meeting_round(seeds, 3, 4) == 2


def test_playoff_seeds_refuse_a_group_smaller_than_advance():
    with pytest.raises(ValueError, match="group 2 has 1 entrants, fewer than advance"):
        playoff_seeds([[1, 2], [3]], 2)


def test_competition_points_match_the_seeds_field_factors():
    # The seed: log10(log10(100) + 1) ≈ 0.47 and log10(log10(1000) + 1) ≈ 0.6.
    assert competition_points(1, 100, 1, 0) == pytest.approx(100000 * 0.47712, rel=1e-4)
    assert competition_points(1, 1000, 1, 0) == pytest.approx(100000 * 0.60206, rel=1e-4)


def test_competition_points_worked_by_hand():
    # 10th of 1,000 teams, a team of 4, 500 days ago:
    # 100000/√4 = 50000; 10^−0.75 = 0.177828; log10(1 + 3) = 0.602060; e^−1 = 0.367879
    # 50000 · 0.177828 · 0.602060 · 0.367879 = 1969.3
    assert competition_points(10, 1000, 4, 500) == pytest.approx(1969.3, abs=0.1)
    # A lone winner of a field of one team scores nothing: log10(1 + log10 1) = 0.
    assert competition_points(1, 1, 1, 0) == 0


def test_competition_points_fall_with_rank_time_and_team_size():
    ranks = [competition_points(rank, 500, 1, 0) for rank in range(1, 501)]
    assert all(a > b for a, b in itertools.pairwise(ranks)), "monotone in rank"
    assert competition_points(3, 500, 1, 500 * math.log(2)) == pytest.approx(ranks[2] / 2), "halves in 500·ln 2 days"
    assert competition_points(3, 500, 4, 0) == pytest.approx(ranks[2] / 2), "shared by √teammates"
    assert competition_points(1, 50, 1, 0, base=1000, rank_power=1, decay_days=100) == pytest.approx(
        1000 * math.log10(1 + math.log10(50))
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((0, 10, 1, 0), "rank must be between 1 and teams"),
        ((11, 10, 1, 0), "rank must be between 1 and teams"),
        ((1, 10, 0, 0), "teammates must be at least 1"),
        ((1, 10, 1, -1), "days must not be negative"),
        ((1, 0, 1, 0), "teams must be at least 1"),
    ],
)
def test_competition_points_reject_impossible_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        competition_points(*arguments)


def test_ffa_seating_grows_pods_for_a_small_field_and_leaves_out_only_what_no_pods_can_seat():
    five = [Entrant(id, 2000 - id) for id in range(1, 6)]

    assert ffa_seating(five, 3) == ([[1, 2, 3, 4, 5]], [])  # no pods of 3 for five: one of 5
    assert ffa_seating(five, 4, most=4) == ([[1, 2, 3, 4]], [5])  # a ladder of four at most: the lowest sits out
    assert ffa_seating(five, 4, most=4, had_bye={5}) == ([[1, 2, 3, 5]], [4])
    seven = [Entrant(id, 2000 - id) for id in range(1, 8)]
    assert ffa_seating(seven, 3, most=3) == ([[1, 2, 3], [4, 5, 6]], [7])


def test_ffa_seating_by_points_puts_the_leaders_together():
    field = [Entrant(id, 2000 - id) for id in range(1, 9)]

    pods, byes = ffa_seating(field, 4, points={8: 3.0, 7: 2.5, 1: 2.5, 5: 2.0})

    assert pods == [[8, 1, 7, 5], [2, 3, 4, 6]] and byes == []  # equal points: the higher rating first


@settings(max_examples=80, deadline=None)
@given(
    st.integers(3, 60),
    st.integers(3, 8),
    st.integers(3, 8),
    st.sets(st.integers(0, 59)),
)
def test_ffa_seating_seats_everyone_once_in_pods_of_three_to_most(count, size, most, had):
    size, most = min(size, most), max(size, most)
    field = [Entrant(id, 1500.0 + (id * 37) % 11) for id in range(count)]

    pods, byes = ffa_seating(field, size, most=most, had_bye=had)

    seated = [entrant for pod in pods for entrant in pod]
    assert sorted(seated + byes) == list(range(count))
    assert all(3 <= len(pod) <= most for pod in pods)
    # As few sit out as must: a field of six or more always fits pods of 3 and 4, five needs a pod of 5.
    fits = (most >= 4 and count != 5) or most >= 5 or count % 3 == 0
    assert (byes == []) == fits
    assert len(byes) <= 2
    if byes and len(set(range(count)) - had) >= len(byes):
        assert not set(byes) & had, "the bye goes to those who have had none while there are such"


def test_pod_places_share_tied_places():
    assert pod_places({7: 1, 8: 2, 9: 2, 10: 4}) == {7: 1.0, 8: 2.5, 9: 2.5, 10: 4.0}
    assert pod_places({1: 1, 2: 1, 3: 1}) == {1: 2.0, 2: 2.0, 3: 2.0}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 8), min_size=2, max_size=8))
def test_pod_places_cover_one_to_n_and_keep_the_order(placements):
    places = pod_places(dict(enumerate(placements)))

    n = len(placements)
    assert math.isclose(sum(places.values()), n * (n + 1) / 2)
    for a, b in itertools.combinations(range(n), 2):
        assert (placements[a] < placements[b]) == (places[a] < places[b])


def test_ffa_standings_of_two_rounds_worked_by_hand():
    rule = PointsRule()
    pods = [
        Pod(1, {1: 1, 2: 2.5, 3: 2.5, 4: 4}),  # 1, ½, ½, 0
        Pod(2, {1: 4, 2: 1, 3: 2, 4: 3}),  # 0, 1, ⅔, ⅓
    ]

    rows = ffa_standings([1, 2, 3, 4], pods, rule)

    assert [(row.id, row.rank) for row in rows] == [(2, 1), (3, 2), (1, 3), (4, 4)]
    assert [row.points for row in rows] == pytest.approx([1.5, 7 / 6, 1.0, 1 / 3])
    assert [row.tiebreaks for row in rows] == [(1.0, 4.0), (0.0, 3.0), (1.0, 3.0), (0.0, 1.0)]
    assert [(row.wins, row.losses, row.games) for row in rows] == [(1, 0, 2), (0, 0, 2), (1, 1, 2), (0, 1, 2)]


def test_ffa_standings_count_a_bye_as_a_middle_place_and_share_ranks_when_all_is_equal():
    rows = ffa_standings([1, 2, 3], [Pod(1, {1: 1.5, 2: 1.5})], PointsRule(win=3, draw=2, loss=1), byes=[3])

    # A shared 1st and 2nd of two, and a bye: each half-way between a win (3) and a loss (1).
    assert [(row.id, row.rank, row.points) for row in rows] == [(1, 1, 2.0), (2, 1, 2.0), (3, 1, 2.0)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(1, 8), min_size=3, max_size=8), min_size=1, max_size=5))
def test_ffa_standings_give_each_pod_its_size_times_a_middle_place(rounds):
    rule = PointsRule(win=2.0, draw=1.0, loss=0.5)
    pods = [Pod(number, pod_places(dict(enumerate(placements)))) for number, placements in enumerate(rounds, 1)]
    ids = sorted({entrant for pod in pods for entrant in pod.places})

    rows = ffa_standings(ids, pods, rule)

    expected = sum(len(pod.places) * (rule.win + rule.loss) / 2 for pod in pods)
    assert math.isclose(sum(row.points for row in rows), expected)
    assert [row.rank for row in rows] == sorted(row.rank for row in rows)
    assert all(a.points >= b.points - 1e-9 for a, b in itertools.pairwise(rows))
