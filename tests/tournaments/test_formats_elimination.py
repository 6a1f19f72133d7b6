"""Single and double elimination brackets (tournaments.formats.elimination)."""

from __future__ import annotations

import random

import pytest

from tournaments.formats import (
    BYE,
    Bracket,
    LoserOf,
    Seed,
    WinnerOf,
    bracket_placements,
    bracket_progress,
    bracket_winner,
    bye_games,
    double_elimination,
    playable_games,
    seed_order,
    single_elimination,
)

SIZES = range(2, 131)


def play_out(bracket: Bracket, pick) -> dict[str, int]:
    """Every playable game decided by ``pick(key, a, b)`` until none is left."""
    winners: dict[str, int] = {}
    while playable := playable_games(bracket, winners):
        progress = bracket_progress(bracket, winners)
        for key in playable:
            a, b = progress[key]
            winners[key] = pick(key, a, b)
    return winners


def favourite(bracket: Bracket):
    rank = {entrant: index for index, entrant in enumerate(bracket.seeds)}
    return lambda key, a, b: a if rank[a] < rank[b] else b


def test_seed_order_meets_one_v_eight_then_the_standard_order():
    assert seed_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert seed_order(16)[:4] == [1, 16, 8, 9]


@pytest.mark.parametrize("count", SIZES)
def test_single_elimination_of_every_size_is_valid_and_the_best_seeds_meet_latest(count):
    seeds = [1000 + index for index in range(count)]
    bracket = single_elimination(seeds)
    first_round = [side for game in bracket.games if game.round == 1 for side in (game.a, game.b)]

    assert sorted(side.index for side in first_round if isinstance(side, Seed)) == list(range(count))
    assert sum(side == BYE for side in first_round) == len(first_round) - count
    assert all(game.a != BYE for game in bracket.games if game.round == 1), "byes sit under the top seeds"
    byes = bye_games(bracket)
    assert sorted(bracket.game(key).a.index for key in byes) == list(range(len(byes))), "the top seeds get the byes"

    winners = play_out(bracket, favourite(bracket))
    progress = bracket_progress(bracket, winners)
    final = f"W{bracket.rounds}-1"
    assert progress[final] == (seeds[0], seeds[1])
    if count >= 4:
        semis = [key for key in progress if key.startswith(f"W{bracket.rounds - 1}-")]
        assert sorted(entrant for key in semis for entrant in progress[key]) == seeds[:4]
    assert bracket_winner(bracket, winners) == seeds[0]
    assert set(winners) == {game.key for game in bracket.games} - byes, "every other game is played once"
    places = bracket_placements(bracket, winners)
    assert set(places) == set(seeds)
    assert places[seeds[0]] == 1 and places[seeds[1]] == 2


@pytest.mark.parametrize("count", SIZES)
def test_double_elimination_of_every_size_plays_out_with_two_losses_each(count):
    seeds = [1000 + index for index in range(count)]
    bracket = double_elimination(seeds)
    rng = random.Random(count)

    winners = play_out(bracket, lambda key, a, b: rng.choice((a, b)))

    losses = {entrant: 0 for entrant in seeds}
    progress = bracket_progress(bracket, winners)
    for key, winner in winners.items():
        a, b = progress[key]
        losses[b if winner == a else a] += 1
    champion = bracket_winner(bracket, winners)
    assert champion is not None
    assert losses[champion] <= 1
    assert all(lost == 2 for entrant, lost in losses.items() if entrant != champion), "out after two losses"
    assert ("GF2" in winners) == (winners["GF1"] == progress["GF1"][1]), "a reset only when the losers' champion wins"
    places = bracket_placements(bracket, winners)
    assert set(places) == set(seeds)
    assert sorted(places.values())[:2] == [1, 2]


def test_double_elimination_resets_when_the_losers_champion_wins_the_first_grand_final():
    bracket = double_elimination([1, 2, 3, 4])
    # W1: 1 beat 4, 2 beat 3; W2: 1 beat 2. L1: 3 beat 4; L2 (3 against 2, who lost W2): 2 won.
    winners = {"W1-1": 1, "W1-2": 2, "W2-1": 1, "L1-1": 3, "L2-1": 2}

    assert bracket_progress(bracket, winners)["GF1"] == (1, 2)
    assert playable_games(bracket, winners) == ["GF1"]
    assert bracket_progress(bracket, {**winners, "GF1": 1})["GF2"] == (None, None)
    assert bracket_winner(bracket, {**winners, "GF1": 1}) == 1
    assert bracket_placements(bracket, {**winners, "GF1": 1}) == {1: 1, 2: 2, 3: 3, 4: 4}

    reset = {**winners, "GF1": 2}
    assert bracket_winner(bracket, reset) is None
    assert playable_games(bracket, reset) == ["GF2"]
    assert bracket_progress(bracket, reset)["GF2"] == (1, 2)
    assert bracket_winner(bracket, {**reset, "GF2": 2}) == 2
    assert bracket_placements(bracket, {**reset, "GF2": 2}) == {2: 1, 1: 2, 3: 3, 4: 4}


def test_double_elimination_of_eight_has_the_standard_losers_bracket():
    bracket = double_elimination(list(range(1, 9)))
    games = {game.key: (game.a, game.b) for game in bracket.games}

    assert games["L1-1"] == (LoserOf("W1-1"), LoserOf("W1-2"))
    assert games["L2-1"] == (WinnerOf("L1-1"), LoserOf("W2-2"))  # reversed, so 1's quarter does not meet again
    assert games["L3-1"] == (WinnerOf("L2-1"), WinnerOf("L2-2"))
    assert games["L4-1"] == (WinnerOf("L3-1"), LoserOf("W3-1"))
    assert games["GF1"] == (WinnerOf("W3-1"), WinnerOf("L4-1"))
    assert [game.key for game in bracket.games][-2:] == ["GF1", "GF2"]


def test_single_elimination_places_share_the_semi_final():
    bracket = single_elimination([1, 2, 3, 4, 5])
    winners = play_out(bracket, favourite(bracket))

    # 5 seeds in 8 slots: 4 v 5 in round 1; semis 1 v 4, 2 v 3; final 1 v 2.
    assert bracket_placements(bracket, winners) == {1: 1, 2: 2, 3: 3, 4: 3, 5: 5}


def test_bracket_refuses_a_winner_who_is_not_in_the_game():
    bracket = single_elimination([1, 2, 3, 4])

    with pytest.raises(ValueError, match="the winner of W1-1 must be 1 or 4, got 2"):
        bracket_progress(bracket, {"W1-1": 2})
    with pytest.raises(ValueError, match="W2-1 has a winner before both its entrants are known"):
        bracket_progress(bracket, {"W2-1": 1})
    with pytest.raises(ValueError, match="does not have: 'X'"):
        playable_games(bracket, {"X": 1})


def test_bracket_refuses_a_winner_for_a_bye():
    bracket = single_elimination([1, 2, 3])

    with pytest.raises(ValueError, match="W1-1 is against a bye"):
        bracket_progress(bracket, {"W1-1": 1})


@pytest.mark.parametrize("seeds", [[], [1], [1, 2, 1]])
def test_bracket_rejects_fewer_than_two_or_repeats(seeds):
    with pytest.raises(ValueError, match="bracket needs at least 2|must not repeat"):
        single_elimination(seeds)
