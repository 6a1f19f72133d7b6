"""Round robin by the Berger tables (tournaments.formats.round_robin)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.formats import round_robin_rounds


def test_round_robin_of_six_is_fides_berger_table():
    assert round_robin_rounds([1, 2, 3, 4, 5, 6]) == [
        [(1, 6), (2, 5), (3, 4)],
        [(6, 4), (5, 3), (1, 2)],
        [(2, 6), (3, 1), (4, 5)],
        [(6, 5), (1, 4), (2, 3)],
        [(3, 6), (4, 2), (5, 1)],
    ]


def test_round_robin_of_three_sits_one_out_each_round():
    assert round_robin_rounds([7, 8, 9]) == [[(7, None), (8, 9)], [(9, None), (7, 8)], [(8, None), (9, 7)]]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.booleans())
def test_round_robin_pairs_everyone_exactly_once_or_twice(count, double):
    ids = [100 + index for index in range(count)]

    rounds = round_robin_rounds(ids, double=double)

    meetings = Counter(frozenset((a, b)) for games in rounds for a, b in games if b is not None)
    cycles = 2 if double else 1
    assert len(rounds) == cycles * (count - 1 if count % 2 == 0 else count)
    assert set(meetings) == {frozenset((a, b)) for a in ids for b in ids if a < b}
    assert set(meetings.values()) == {cycles}
    for games in rounds:
        seated = [entrant for game in games for entrant in game if entrant is not None]
        assert sorted(seated) == ids, "each plays at most once a round, and everyone is seated"
    if double:
        first = [(a, b) for games in rounds[: len(rounds) // 2] for a, b in games if b is not None]
        second = [(b, a) for games in rounds[len(rounds) // 2 :] for a, b in games if b is not None]
        assert first == second, "the second cycle mirrors the first"


@pytest.mark.parametrize("ids", [[], [1], [1, 1]])
def test_round_robin_rejects_fewer_than_two_or_repeats(ids):
    with pytest.raises(ValueError, match="round robin needs at least 2|must not repeat"):
        round_robin_rounds(ids)
