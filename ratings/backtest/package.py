"""The ``glicko2`` package from PyPI (Ryan Kirkman's, 2.1.0) as a baseline, used as its README shows.

Issue 17 asks the recommendation to beat it as well as Elo K=32. The package has no clock:
a naive ladder calls ``update_player`` after every game, so each game is a rating period
for both players (their RD grows by σ once a game, never with idle time), from the
package's own new player (1500, RD 350, σ 0.06, τ 0.5). Its prediction is its own
``_E``: Glickman's expected score with the opponent's RD only, which is what the package
offers for "how likely is a to win". Both players are updated from the ratings before the
game, as a rating period requires.
"""

from __future__ import annotations

from collections.abc import Sequence

import glicko2  # type: ignore[import-untyped]  # no type hints of its own

from ratings.backtest.data import Match
from ratings.backtest.replay import Predictions

SCALE = 173.7178  # the package's (and Glickman's) factor between the two scales


def glicko2_package(matches: Sequence[Match], *, score_from: int = 0) -> Predictions:
    """Replay ``matches`` through ``glicko2.Player``; predictions of ``matches[score_from:]`` only."""
    players: dict[str, glicko2.Player] = {}
    probabilities: list[float] = []
    outcomes: list[float] = []
    favourites: list[float] = []
    for index, (_at, name_a, name_b, score) in enumerate(matches):
        a = players.setdefault(name_a, glicko2.Player())
        b = players.setdefault(name_b, glicko2.Player())
        rating_a, rd_a, rating_b, rd_b = a.rating, a.rd, b.rating, b.rd
        if index >= score_from:
            probabilities.append(a._E((rating_b - 1500.0) / SCALE, rd_b / SCALE))
            outcomes.append(score)
            favourites.append(max(rating_a, rating_b))
        a.update_player([rating_b], [rd_b], [score])
        b.update_player([rating_a], [rd_a], [1.0 - score])
    return Predictions(probabilities, outcomes, favourites)
