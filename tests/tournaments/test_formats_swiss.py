"""Swiss pairings (tournaments.formats.swiss): properties on random tournaments, and a
brute-force oracle for fields of up to a dozen.

The oracle tries every bye and every perfect matching of the others, and keeps the least
(bye to someone who had none, rematches, the bye's score then rank from the bottom,
floaters, sum of squared score gaps), the order of docs/rules.md §22. It shares no code with
the search: points, meetings and ranks are counted again here.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.formats import Entrant, Game, PointsRule, RoundPairing, swiss_pairings

RULE = PointsRule()


@dataclass
class Field:
    entrants: list[Entrant]
    games: list[Game]


def points_and_meetings(games: Sequence[Game]) -> tuple[dict[int, float], set[frozenset[int]], set[int]]:
    points: dict[int, float] = {}
    met: set[frozenset[int]] = set()
    byes: set[int] = set()
    for game in games:
        if game.kind == "bye":
            points[game.a] = points.get(game.a, 0) + 1.0
            byes.add(game.a)
        elif game.kind == "absent":
            points[game.a] = points.get(game.a, 0) + 0.5
        else:
            assert game.b is not None
            points[game.a] = points.get(game.a, 0) + game.result
            points[game.b] = points.get(game.b, 0) + 1 - game.result
            met.add(frozenset((game.a, game.b)))
    return points, met, byes


def matchings(players: list[int]) -> Iterator[list[tuple[int, int]]]:
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for index, partner in enumerate(rest):
        for tail in matchings(rest[:index] + rest[index + 1 :]):
            yield [(first, partner), *tail]


class Judge:
    """Scores a pairing of ``field`` by the rules' order (smaller is better)."""

    def __init__(self, field: Field) -> None:
        points, self.met, self.byes = points_and_meetings(field.games)
        self.score = {e.id: points.get(e.id, 0.0) for e in field.entrants}
        ranked = sorted(field.entrants, key=lambda e: (-self.score[e.id], -e.rating, e.id))
        self.position = {e.id: index for index, e in enumerate(ranked)}
        self.everyone_had_one = all(e.id in self.byes for e in field.entrants)

    def __call__(self, pairs: Sequence[tuple[int, int]], bye: int | None) -> tuple[float, ...]:
        score = self.score
        return (
            int(bye is not None and bye in self.byes and not self.everyone_had_one),
            sum(frozenset(pair) in self.met for pair in pairs),
            score[bye] if bye is not None else 0,
            -self.position[bye] if bye is not None else 0,
            sum(2 for a, b in pairs if score[a] != score[b]),
            sum((score[a] - score[b]) ** 2 for a, b in pairs),
        )


def cost(field: Field, pairs: Sequence[tuple[int, int]], bye: int | None) -> tuple[float, ...]:
    return Judge(field)(pairs, bye)


def oracle(field: Field) -> tuple[float, ...]:
    ids = [e.id for e in field.entrants]
    byes: list[int | None] = [None] if len(ids) % 2 == 0 else list(ids)
    judge = Judge(field)
    return min(judge(pairs, bye) for bye in byes for pairs in matchings([entrant for entrant in ids if entrant != bye]))


def assert_valid(pairing: RoundPairing, field: Field) -> None:
    seated = [entrant for pair in pairing.pairs for entrant in pair]
    if pairing.bye is not None:
        seated.append(pairing.bye)
    assert sorted(seated) == sorted(e.id for e in field.entrants), "everyone once, nobody twice"
    assert (pairing.bye is None) == (len(field.entrants) % 2 == 0)
    _, _, byes = points_and_meetings(field.games)
    if pairing.bye is not None and any(e.id not in byes for e in field.entrants):
        assert pairing.bye not in byes, "a second bye while someone has had none"


def play(field: Field, pairing: RoundPairing, number: int, rng: random.Random) -> None:
    for a, b in pairing.pairs:
        field.games.append(Game(number, a, b, rng.choice((1.0, 0.5, 0.0))))
    if pairing.bye is not None:
        field.games.append(Game(number, pairing.bye, None, 1.0, "bye"))


@st.composite
def tournaments(draw: st.DrawFn, most: int, least: int = 2) -> tuple[Field, Field]:
    """A Swiss tournament played for some rounds with random results, late joins (an absence
    for each round missed) and withdrawals; and the field of the round after it."""
    count = draw(st.integers(least, most))
    rounds = draw(st.integers(0, 6))
    rng = draw(st.randoms(use_true_random=False))
    ratings = draw(st.lists(st.integers(1000, 1100), min_size=count, max_size=count))
    joins = [draw(st.integers(1, max(1, (rounds + 1) // 2 + 1))) if draw(st.booleans()) else 1 for _ in range(count)]
    leaves = [draw(st.integers(1, rounds + 1)) if draw(st.integers(0, 4)) == 0 else rounds + 2 for _ in range(count)]
    joins[:2] = [1, 1]  # two entrants play throughout, so every round has a game
    leaves[:2] = [rounds + 2, rounds + 2]
    everyone = [Entrant(index + 1, float(rating)) for index, rating in enumerate(ratings)]
    games: list[Game] = []
    for number in range(1, rounds + 2):
        playing = [e for e, join, leave in zip(everyone, joins, leaves, strict=True) if join <= number < leave]
        for e, join in zip(everyone, joins, strict=True):
            if join == number and join > 1:
                games += [Game(missed, e.id, None, 0.5, "absent") for missed in range(1, join)]
        field = Field(playing, games)
        pairing = swiss_pairings(playing, games, RULE)
        assert_valid(pairing, field)
        if number == rounds + 1:
            return field, Field(playing, list(games))
        play(field, pairing, number, rng)
    raise AssertionError("unreachable")


@settings(max_examples=150, deadline=None)
@given(tournaments(most=11))
def test_swiss_pairing_is_as_good_as_the_brute_force_oracle(tournament):
    field, _ = tournament
    pairing = swiss_pairings(field.entrants, field.games, RULE)

    assert_valid(pairing, field)
    assert cost(field, pairing.pairs, pairing.bye) == oracle(field)


@settings(max_examples=40, deadline=None)
@given(tournaments(most=12, least=10))
def test_swiss_pairing_of_ten_to_twelve_is_as_good_as_the_oracle(tournament):
    field, _ = tournament
    pairing = swiss_pairings(field.entrants, field.games, RULE)

    assert_valid(pairing, field)
    assert cost(field, pairing.pairs, pairing.bye) == oracle(field)


@settings(max_examples=60, deadline=None)
@given(tournaments(most=40))
def test_swiss_rounds_of_larger_fields_pair_everyone_once(tournament):
    field, _ = tournament
    pairing = swiss_pairings(field.entrants, field.games, RULE)

    assert_valid(pairing, field)


def test_swiss_first_round_pairs_top_half_against_bottom_half():
    entrants = [Entrant(id, 2000 - 10 * id) for id in range(1, 9)]

    pairing = swiss_pairings(entrants, [], RULE)

    assert pairing == RoundPairing(((1, 5), (2, 6), (3, 7), (4, 8)), None)


def test_swiss_bye_goes_to_the_lowest_ranked_of_the_lowest_group_who_had_none():
    entrants = [Entrant(id, 2000 - 10 * id) for id in range(1, 6)]
    # Round 1: 1 beat 3, 2 beat 4, 5 had the bye. So 1, 2, 5 have a point; 3 and 4 none.
    games = [Game(1, 1, 3, 1.0), Game(1, 2, 4, 1.0), Game(1, 5, None, 1.0, "bye")]

    pairing = swiss_pairings(entrants, games, RULE)

    assert pairing.bye == 4
    assert pairing.pairs == ((1, 2), (5, 3))


def test_swiss_absence_is_not_a_bye():
    entrants = [Entrant(id, 2000 - 10 * id) for id in range(1, 6)]
    games = [Game(1, 1, 2, 0.5), Game(1, 3, 4, 0.5), Game(1, 5, None, 0.5, "absent")]

    assert swiss_pairings(entrants, games, RULE) == RoundPairing(((1, 3), (2, 4)), 5)


def test_swiss_avoids_a_rematch_by_floating():
    # 1 and 2 are alone on a point and have met; 3 and 4 on none: 1-3 and 2-4 avoid the rematch.
    entrants = [Entrant(id, 2000 - 10 * id) for id in range(1, 5)]
    games = [Game(1, 1, 2, 0.5), Game(1, 3, 4, 0.5), Game(2, 1, 3, 1.0), Game(2, 2, 4, 1.0)]

    pairing = swiss_pairings(entrants, games, RULE)

    assert sorted(map(sorted, pairing.pairs)) == [[1, 4], [2, 3]]


def test_swiss_pairs_a_thousand_after_five_rounds_without_a_rematch():
    rng = random.Random(32)
    entrants = [Entrant(id, rng.uniform(1000, 2200)) for id in range(1, 1001)]
    field = Field(entrants, [])
    for number in range(1, 6):
        play(field, swiss_pairings(entrants, field.games, RULE), number, rng)

    pairing = swiss_pairings(entrants, field.games, RULE)

    assert_valid(pairing, field)
    _, met, _ = points_and_meetings(field.games)
    assert not any(frozenset(pair) in met for pair in pairing.pairs)


@pytest.mark.parametrize("budget", [0, -1])
def test_swiss_rejects_a_budget_below_one(budget):
    with pytest.raises(ValueError, match="budget must be at least 1"):
        swiss_pairings([Entrant(1, 1500), Entrant(2, 1500)], [], RULE, budget=budget)


def test_swiss_rejects_an_entrant_twice():
    with pytest.raises(ValueError, match="entrants must not repeat an entrant, got 1 twice"):
        swiss_pairings([Entrant(1, 1500), Entrant(1, 1500)], [], RULE)


def test_swiss_requested_bye_counts_as_the_entrants_one_bye():
    # Round 1: everyone drew and 5 sat out with a requested bye (½): all on ½, and 5, the
    # lowest-ranked, would take the pairing's bye had its requested one not counted.
    entrants = [Entrant(id, 2000 - 10 * id) for id in range(1, 6)]
    games = [Game(1, 1, 2, 0.5), Game(1, 3, 4, 0.5), Game(1, 5, None, 0.5, "requested")]

    assert swiss_pairings(entrants, games, RULE).bye == 4


def test_swiss_bye_passes_over_an_entrant_with_a_requested_bye_to_come():
    # docs/rules.md §22's worked example: 5 asked to sit out round 2, so round 1's bye goes to 4.
    entrants = [Entrant(id, 2000 - 10 * id) for id in range(1, 6)]

    assert swiss_pairings(entrants, [], RULE) == RoundPairing(((1, 3), (2, 4)), 5)
    assert swiss_pairings(entrants, [], RULE, byes_to_come=[5]) == RoundPairing(((1, 3), (2, 5)), 4)
