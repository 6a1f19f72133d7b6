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
    cap = params.newcomer_cap
    new_sides = [all(count < threshold for count in side) for side in games]
    if not any(new_sides):
        return result  # the common case on a ladder of regulars
    sides: list[tuple[PlayerResult, ...]] = []
    changed = False
    for index, (side_before, side_results) in enumerate(zip(before, result.sides, strict=True)):
        only_newcomers = all(new for other, new in enumerate(new_sides) if other != index)
        if not only_newcomers:
            sides.append(side_results)
            continue
        members = []
        for state, outcome in zip(side_before, side_results, strict=True):
            if -cap <= outcome.delta <= cap:
                members.append(outcome)
                continue
            delta = cap if outcome.delta > 0 else -cap
            members.append(outcome._replace(rating=state.rating + delta, delta=delta))
            changed = True
        sides.append(tuple(members))
    return GameResult(tuple(sides), result.composites) if changed else result
