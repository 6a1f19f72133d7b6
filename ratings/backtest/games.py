"""Replaying a ladder's games of every shape: 1 v 1, teams and free-for-all (issue 17, issue 30).

A results file or a ladder's history holds 1 v 1 games, team games (two sides, one of them
with several players: *even* when both sides have as many players, *uneven* otherwise) and
free-for-alls (three sides or more). Each game is scored as predictions of P(side beats
side), made before its update:

- 1 v 1 and teams: one prediction, P(first side beats the second) as the engine itself sees
  the game (``Engine.win_probability``: for the Glicko family and Elo each side's composite,
  the smaller side padded with null players, both RDs at the game's instant; TrueSkill its
  own), against the first side's pair score (1, ½ or 0);
- free-for-all: one prediction per pair of sides, P(i beats j) the same way, against the
  pair's score from their places (docs/rules.md §9: every pair of a free-for-all is a game
  of its own for the update too). A free-for-all of n sides gives n(n−1)/2 predictions.

Every prediction carries its game type (``game_kind``), so ``metrics`` can be read per
type. The update is ``Engine.rate`` itself, as in ``replay``. ``team_mean_elo`` is the
baseline every engine must beat on team games: plain Elo K=32 on each side's mean rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ratings.backtest.data import Game, split_index
from ratings.backtest.metrics import metrics
from ratings.backtest.replay import INITIAL_RATING, INITIAL_VOLATILITY, Predictions
from ratings.engines import Engine, Params, RatingState, get_engine
from ratings.engines.base import pair_score
from ratings.engines.probability import elo_expected_score

ONE_V_ONE, EVEN_TEAMS, UNEVEN_TEAMS, FREE_FOR_ALL = "one_v_one", "even_teams", "uneven_teams", "free_for_all"
TEAMS = "teams"  # the family of both team types (``game_type``)
TYPES = (ONE_V_ONE, EVEN_TEAMS, UNEVEN_TEAMS, FREE_FOR_ALL)  # ``game_kind``'s answers, in report order
TYPE_LABELS = {
    ONE_V_ONE: "1 v 1",
    TEAMS: "Teams",
    EVEN_TEAMS: "Even teams",
    UNEVEN_TEAMS: "Uneven teams",
    FREE_FOR_ALL: "Free-for-all",
}
TEAM_ELO_K = 32.0  # the team baseline's K, as the 1 v 1 baseline's (``replay.ELO_BASELINE``)

__all__ = [
    "EVEN_TEAMS",
    "FREE_FOR_ALL",
    "ONE_V_ONE",
    "TEAMS",
    "TYPES",
    "TYPE_LABELS",
    "UNEVEN_TEAMS",
    "Game",
    "Scored",
    "by_type",
    "game_kind",
    "game_type",
    "metrics_by_type",
    "pair_count",
    "replay_games",
    "replay_games_engine",
    "team_mean_elo",
]


class Scored(NamedTuple):
    """The scored games' predictions in order, and each prediction's game type (``game_kind``)."""

    predictions: Predictions
    types: list[str]


def game_type(sides: Sequence[Sequence[object]]) -> str:
    """1 v 1 (two sides of one), teams (two sides, one of several) or free-for-all (three sides or more)."""
    if len(sides) > 2:
        return FREE_FOR_ALL
    return ONE_V_ONE if all(len(side) == 1 for side in sides) else TEAMS


def game_kind(sides: Sequence[Sequence[object]]) -> str:
    """``game_type`` with teams split: even (as many players a side) or uneven."""
    kind = game_type(sides)
    if kind != TEAMS:
        return kind
    return EVEN_TEAMS if len(sides[0]) == len(sides[1]) else UNEVEN_TEAMS


def pair_count(game: Game) -> int:
    """How many predictions ``game`` gives: one per pair of sides."""
    count = len(game.sides)
    return count * (count - 1) // 2


def replay_games(games: Sequence[Game], engine: Engine, *, score_from: int = 0) -> Scored:
    """Replay every game through ``engine``; predictions of ``games[score_from:]`` only.

    Each prediction is ``engine.win_probability`` of the two sides' states before the game.
    """
    params = engine.params
    states: dict[str, RatingState] = {}
    probabilities: list[float] = []
    outcomes: list[float] = []
    favourites: list[float] = []
    types: list[str] = []
    win_probability = engine.win_probability
    rate = engine.rate
    for index, (at, sides, placements) in enumerate(games):
        lineup = [
            tuple(
                states.get(name) or RatingState(INITIAL_RATING, params.initial_rd, INITIAL_VOLATILITY, at)
                for name in side
            )
            for side in sides
        ]
        if index >= score_from:
            kind = game_kind(sides)
            for i in range(len(sides)):
                for j in range(i + 1, len(sides)):
                    probabilities.append(win_probability(lineup[i], lineup[j], at))
                    outcomes.append(pair_score(placements[i], placements[j]))
                    favourites.append(max(state.rating for side in (lineup[i], lineup[j]) for state in side))
                    types.append(kind)
        result = rate(lineup, placements, at).sides
        for side, rated in zip(sides, result, strict=True):
            for name, player in zip(side, rated, strict=True):
                states[name] = player.after
    return Scored(Predictions(probabilities, outcomes, favourites), types)


def replay_games_engine(games: Sequence[Game], engine: str, params: Params, *, score_from: int = 0) -> Scored:
    """``replay_games`` through ``get_engine(engine, params)`` (a picklable call for the tuner's pool)."""
    return replay_games(games, get_engine(engine, params), score_from=score_from)


def team_mean_elo(games: Sequence[Game], *, score_from: int = 0, k: float = TEAM_ELO_K) -> Scored:
    """Plain Elo on the team's mean: the textbook baseline for team games.

    Each side is its members' mean rating (new players 1500); P(i beats j) is
    ``1/(1 + 10^((Rj − Ri)/400))``; each member of a side moves ``K·(s − E)`` by its side's
    result, in a free-for-all by the mean of ``s − E`` over the other sides.
    """
    ratings: dict[str, float] = {}
    probabilities: list[float] = []
    outcomes: list[float] = []
    favourites: list[float] = []
    types: list[str] = []
    for index, (_at, sides, placements) in enumerate(games):
        means = [sum(ratings.get(name, INITIAL_RATING) for name in side) / len(side) for side in sides]
        count = len(sides)
        moves = [0.0] * count
        kind = game_kind(sides)
        for i in range(count):
            for j in range(i + 1, count):
                expected = elo_expected_score(means[i], means[j])
                score = pair_score(placements[i], placements[j])
                moves[i] += score - expected
                moves[j] -= score - expected
                if index >= score_from:
                    probabilities.append(expected)
                    outcomes.append(score)
                    favourites.append(max(means[i], means[j]))
                    types.append(kind)
        for side, move in zip(sides, moves, strict=True):
            change = k * move / (count - 1)
            for name in side:
                ratings[name] = ratings.get(name, INITIAL_RATING) + change
    return Scored(Predictions(probabilities, outcomes, favourites), types)


def metrics_by_type(
    probabilities: Sequence[float], outcomes: Sequence[float], types: Sequence[str]
) -> dict[str, dict[str, float | int]]:
    """``metrics`` of the predictions of each game type present, in ``TYPES`` order."""
    groups: dict[str, tuple[list[float], list[float]]] = {}
    for p, y, kind in zip(probabilities, outcomes, types, strict=True):
        group = groups.setdefault(kind, ([], []))
        group[0].append(p)
        group[1].append(y)
    return {kind: metrics(*groups[kind]).as_dict() for kind in TYPES if kind in groups}


def by_type(games: Sequence[Game], engine: str, params: Params) -> dict[str, dict[str, float | int]]:
    """``engine``'s metrics on the last 20% of ``games`` (``split_index``), per game type present."""
    scored = replay_games(games, get_engine(engine, params), score_from=split_index(games))
    return metrics_by_type(scored.predictions.probabilities, scored.predictions.outcomes, scored.types)
