"""Replaying a ladder's games of every shape: 1 v 1, teams and free-for-all (issue 17, item 1).

A CSV holds 1 v 1 results only (``data.Match``); a ladder's history also holds team games
(two sides, one of them with several players, even or uneven) and free-for-alls (three sides
or more). Each game is scored as predictions of P(side beats side), made before its update:

- 1 v 1 and teams: one prediction, P(first side beats the second) exactly as the engines
  compute it when rating the game (``balance.team_win_probability``: the smaller team padded
  with null players, each team's composite, both RDs at the game's instant), against the
  first side's pair score (1, ½ or 0);
- free-for-all: one prediction per pair of sides, P(i beats j) the same way, against the
  pair's score from their places (docs/rules.md §9: every pair of a free-for-all is a game
  of its own for the update too). A free-for-all of n sides gives n(n−1)/2 predictions.

Every prediction carries its game type, so ``metrics`` can be read per type. The update is
``Engine.rate`` itself, as in ``replay``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ratings.backtest.data import split_index
from ratings.backtest.metrics import metrics
from ratings.backtest.replay import INITIAL_RATING, INITIAL_VOLATILITY, Predictions
from ratings.engines import Engine, Params, RatingState, get_engine
from ratings.engines.balance import team_win_probability
from ratings.engines.base import pair_score

ONE_V_ONE, TEAMS, FREE_FOR_ALL = "one_v_one", "teams", "free_for_all"


class Game(NamedTuple):
    """One rated game: its instant (POSIX seconds), players by side and each side's place (1 = first)."""

    at: float
    sides: tuple[tuple[str, ...], ...]
    placements: tuple[int, ...]


class Scored(NamedTuple):
    """The scored games' predictions in order, and each prediction's game type."""

    predictions: Predictions
    types: list[str]


def game_type(sides: Sequence[Sequence[object]]) -> str:
    """1 v 1 (two sides of one), teams (two sides, one of several) or free-for-all (three sides or more)."""
    if len(sides) > 2:
        return FREE_FOR_ALL
    return ONE_V_ONE if all(len(side) == 1 for side in sides) else TEAMS


def replay_games(games: Sequence[Game], engine: Engine, *, score_from: int = 0) -> Scored:
    """Replay every game through ``engine``; predictions of ``games[score_from:]`` only."""
    params = engine.params
    null_rating, null_rd = params.null_rating, params.null_player_rd
    states: dict[str, RatingState] = {}
    probabilities: list[float] = []
    outcomes: list[float] = []
    favourites: list[float] = []
    types: list[str] = []
    for index, (at, sides, placements) in enumerate(games):
        lineup = [
            [
                states.get(name) or RatingState(INITIAL_RATING, params.initial_rd, INITIAL_VOLATILITY, at)
                for name in side
            ]
            for side in sides
        ]
        if index >= score_from:
            kind = game_type(sides)
            members = [[(state.rating, engine.rd_at(state, at)) for state in side] for side in lineup]
            for i in range(len(sides)):
                for j in range(i + 1, len(sides)):
                    probabilities.append(
                        team_win_probability(members[i], members[j], null_rating=null_rating, null_rd=null_rd)
                    )
                    outcomes.append(pair_score(placements[i], placements[j]))
                    favourites.append(max(rating for side in (members[i], members[j]) for rating, _ in side))
                    types.append(kind)
        result = engine.rate([tuple(side) for side in lineup], placements, at).sides
        for side, rated in zip(sides, result, strict=True):
            for name, player in zip(side, rated, strict=True):
                states[name] = player.after
    return Scored(Predictions(probabilities, outcomes, favourites), types)


def by_type(games: Sequence[Game], engine: str, params: Params) -> dict[str, dict[str, float | int]]:
    """``engine``'s metrics on the last 20% of ``games`` (``split_index``), per game type present."""
    scored = replay_games(games, get_engine(engine, params), score_from=split_index(games))
    groups: dict[str, tuple[list[float], list[float]]] = {}
    predictions = scored.predictions
    for p, y, kind in zip(predictions.probabilities, predictions.outcomes, scored.types, strict=True):
        group = groups.setdefault(kind, ([], []))
        group[0].append(p)
        group[1].append(y)
    return {kind: metrics(ps, ys).as_dict() for kind, (ps, ys) in groups.items()}
