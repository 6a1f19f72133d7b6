"""The ladders-and-matches domain."""

from ladder.models.ladder import (
    LUCK_P_MIN,
    MAX_PLAYERS_PER_MATCH,
    Ladder,
    LeaderboardScale,
    RatingEngine,
    TeamUpdate,
    validate_time_zone,
)
from ladder.models.match import (
    Confirmation,
    Match,
    MatchFormat,
    MatchSide,
    MatchStatus,
    Participant,
    SideAnswer,
)
from ladder.models.snapshot import LeaderboardSnapshot, NightlyRun, SnapshotEntry

__all__ = [
    "LUCK_P_MIN",
    "MAX_PLAYERS_PER_MATCH",
    "Confirmation",
    "Ladder",
    "LeaderboardScale",
    "LeaderboardSnapshot",
    "Match",
    "MatchFormat",
    "MatchSide",
    "MatchStatus",
    "NightlyRun",
    "Participant",
    "RatingEngine",
    "SideAnswer",
    "SnapshotEntry",
    "TeamUpdate",
    "validate_time_zone",
]
