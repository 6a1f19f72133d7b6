"""Replaying results through an engine, recording each match's prediction before its update.

The prediction is the win probability the site shows (docs/rules.md §2): both ratings and
both RDs brought to the match's instant with ``Engine.rd_at``, then ``win_probability``.
The update is ``Engine.rate`` itself, so a backtest measures the very maths a ladder runs.
A player's first game starts from a new member's values (docs/rules.md §1: 1500, the
params' initial RD, σ 0.06) with ``rd_as_of`` at that game, as for someone who just joined.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ratings.backtest.data import Match
from ratings.engines import Engine, Params, RatingState, get_engine, win_probability
from ratings.engines.probability import elo_expected_score

INITIAL_RATING = 1500.0  # a ladder's default initial rating (docs/rules.md §1)
INITIAL_VOLATILITY = 0.06  # a ladder's default initial σ (docs/rules.md §1)
ELO_BASELINE = Params(k=32.0)  # plain Elo K=32, the baseline every engine must beat (issue 17)

# Placements for a's score: 1 → a first, ½ → the same place, 0 → b first (docs/rules.md §9).
_PLACEMENTS = {1.0: (1, 2), 0.5: (1, 1), 0.0: (2, 1)}


class Predictions(NamedTuple):
    """The scored matches' predictions, in order: P(a beats b) and the favourite's rating.

    ``favourites`` is the higher of the two pre-match ratings (for the rating bands of
    ``metrics.by_band``); ``outcomes`` is a's score.
    """

    probabilities: list[float]
    outcomes: list[float]
    favourites: list[float]


def replay(
    matches: Sequence[Match], engine: Engine, *, score_from: int = 0, plain_elo: bool = False, edge: float = 0.0
) -> Predictions:
    """Replay every match through ``engine``; predictions of ``matches[score_from:]`` only.

    The matches before ``score_from`` are the training part: they move ratings but are not
    scored. ``plain_elo`` predicts with Elo's own ``1/(1 + 10^((rb − ra)/400))`` instead of
    the site's win probability, which also counts Elo's confidence RD (issue 17: the two
    differ, 0.760 against 0.696): the textbook Elo baseline.

    ``edge`` is the first-named side's edge in rating points: a plays as if ``edge`` points
    stronger, in its prediction and in its update, and keeps its own rating afterwards
    (a football file's home team, chess's white; ``tune`` learns it from the training part).
    A ladder's sides have no order, so a ladder's backtest keeps it at 0.
    """
    params = engine.params
    states: dict[str, RatingState] = {}
    rd_at = engine.rd_at
    rate = engine.rate
    probabilities: list[float] = []
    outcomes: list[float] = []
    favourites: list[float] = []
    own = type(engine).win_probability is not Engine.win_probability  # TrueSkill's, not docs/rules.md §2
    for index, (at, name_a, name_b, score) in enumerate(matches):
        a = states.get(name_a) or RatingState(INITIAL_RATING, params.initial_rd, INITIAL_VOLATILITY, at)
        b = states.get(name_b) or RatingState(INITIAL_RATING, params.initial_rd, INITIAL_VOLATILITY, at)
        if index >= score_from:
            if plain_elo:
                probabilities.append(elo_expected_score(a.rating + edge, b.rating))
            elif own:
                probabilities.append(engine.win_probability((a._replace(rating=a.rating + edge),), (b,), at))
            else:
                probabilities.append(win_probability(a.rating + edge, rd_at(a, at), b.rating, rd_at(b, at)))
            outcomes.append(score)
            favourites.append(a.rating if a.rating >= b.rating else b.rating)
        playing = a._replace(rating=a.rating + edge) if edge else a
        result = rate(((playing,), (b,)), _PLACEMENTS[score], at).sides
        after = result[0][0].after
        states[name_a] = after._replace(rating=after.rating - edge) if edge else after
        states[name_b] = result[1][0].after
    return Predictions(probabilities, outcomes, favourites)


def replay_engine(
    matches: Sequence[Match], engine: str, params: Params, *, score_from: int = 0, edge: float = 0.0
) -> Predictions:
    """``replay`` through ``get_engine(engine, params)`` (a picklable call for the tuner's pool)."""
    return replay(matches, get_engine(engine, params), score_from=score_from, edge=edge)


def elo_baseline(matches: Sequence[Match], *, score_from: int = 0) -> Predictions:
    """Plain Elo K=32 through the project's Elo engine, predicting with Elo's own expectation."""
    return replay(matches, get_engine("elo", ELO_BASELINE), score_from=score_from, plain_elo=True)


def half_baseline(outcomes: Sequence[float], favourites: Sequence[float]) -> Predictions:
    """Always 50%: the floor any rating must beat (log-loss ln 2 ≈ 0.693)."""
    return Predictions([0.5] * len(outcomes), list(outcomes), list(favourites))
