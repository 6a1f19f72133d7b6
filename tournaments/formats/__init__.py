"""The rules of tournament formats: pure Python, no Django import, no clock, no randomness.

Swiss, round robin, single and double elimination, groups then playoffs, free-for-all pods,
standings with tie-breaks, and Kaggle's competition points across events
(docs/rules.md §22). Everything comes in as arguments and goes out as values, so the
tournaments app stores and shows what these functions decide, and tests and benchmarks use
them alone.
"""

from __future__ import annotations

from tournaments.formats.elimination import (
    BYE,
    Bracket,
    BracketGame,
    Bye,
    LoserOf,
    Seed,
    Source,
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
from tournaments.formats.ffa import (
    FFA_TIEBREAKS,
    MAX_POD,
    Pod,
    ffa_pods,
    ffa_seating,
    ffa_standings,
    placement_points,
    pod_places,
)
from tournaments.formats.groups import playoff_seeds, snake_groups
from tournaments.formats.points import competition_points
from tournaments.formats.round_robin import round_robin_rounds
from tournaments.formats.standings import TIEBREAKS, Standing, standings
from tournaments.formats.swiss import DEFAULT_BUDGET, RoundPairing, SwissHistory, swiss_history, swiss_pairings
from tournaments.formats.values import KINDS, Entrant, Game, PointsRule, Seat, seats

__all__ = [
    "BYE",
    "DEFAULT_BUDGET",
    "FFA_TIEBREAKS",
    "KINDS",
    "MAX_POD",
    "TIEBREAKS",
    "Bracket",
    "BracketGame",
    "Bye",
    "Entrant",
    "Game",
    "LoserOf",
    "Pod",
    "PointsRule",
    "RoundPairing",
    "Seat",
    "Seed",
    "Source",
    "Standing",
    "SwissHistory",
    "WinnerOf",
    "bracket_placements",
    "bracket_progress",
    "bracket_winner",
    "bye_games",
    "competition_points",
    "double_elimination",
    "ffa_pods",
    "ffa_seating",
    "ffa_standings",
    "placement_points",
    "playable_games",
    "playoff_seeds",
    "pod_places",
    "round_robin_rounds",
    "seats",
    "seed_order",
    "single_elimination",
    "snake_groups",
    "standings",
    "swiss_history",
    "swiss_pairings",
]
