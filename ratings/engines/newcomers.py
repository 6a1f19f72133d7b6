"""New accounts carry less weight (docs/rules.md §15, "New accounts").

A player whose every opponent in a game is a newcomer (fewer than ``Params.newcomer_games``
rated games on the ladder before it) moves at most ``Params.newcomer_cap`` points in that
game, up or down. The engine's RD and volatility stand: the game still happened and says
as much about the player's certainty; only what it is worth in points is bounded.

The rule reads nothing but the players' game counts before the game, which the live
update and a replay both carry, so replays reproduce it bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

from ratings.engines.values import GameResult, Params, PlayerResult, RatingState


def newcomers_limit(
    result: GameResult,
    before: Sequence[Sequence[RatingState]],
    games: Sequence[Sequence[int]],
    params: Params,
) -> GameResult:
    """``result`` with each player's change bounded when every opponent is a newcomer.

    ``before`` and ``games`` are in the game's side and member order: each player's state
    before the game and their rated games on the ladder before it. Returns ``result``
    itself when the rule is off or bounds nobody.
    """
    threshold = params.newcomer_games
    if threshold <= 0:
        return result
    new_sides = [max(side) < threshold for side in games]  # a side of newcomers only
    newcomer_sides = sum(new_sides)
    if not newcomer_sides:
        return result  # the common case on a ladder of regulars
    cap = params.newcomer_cap
    others = len(new_sides) - 1
    sides = list(result.sides)
    changed = False
    for index, side_results in enumerate(sides):
        if newcomer_sides - new_sides[index] < others:
            continue  # a regular among the opponents
        side_before = before[index]
        members = list(side_results)
        for member, outcome in enumerate(side_results):
            delta = outcome.delta
            if delta > cap or delta < -cap:
                delta = cap if delta > 0 else -cap
                rating = side_before[member].rating + delta
                members[member] = PlayerResult(
                    rating, outcome.rd, outcome.volatility, outcome.rd_as_of, delta, outcome.expected, outcome.score,
                    outcome.rd_at_game,
                )  # fmt: skip
                changed = True
        sides[index] = tuple(members)
    return GameResult(tuple(sides), result.composites) if changed else result
