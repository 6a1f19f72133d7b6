"""The ladders-and-matches domain."""

from ladder.models.conversation import COMMENT_MAX_LENGTH, Evidence, MatchComment
from ladder.models.fields import FieldKind, FieldScope, MatchField, MatchFieldValue
from ladder.models.ladder import (
    LUCK_P_MIN,
    MAX_PLAYERS_PER_MATCH,
    Ladder,
    LeaderboardScale,
    RatingEngine,
    TeamUpdate,
    validate_time_zone,
)
from ladder.models.mark import MarkKind, PlayerMark
from ladder.models.match import (
    OPEN_STATUSES,
    CancelReason,
    Confirmation,
    Match,
    MatchFormat,
    MatchSide,
    MatchStatus,
    Participant,
    SideAnswer,
)
from ladder.models.series import SeriesGame
from ladder.models.snapshot import LeaderboardSnapshot, NightlyRun, SnapshotEntry
from ladder.models.suspension import Suspension
from ladder.models.watch import Outcome, PlayerReport, ReportReason, ReportStatus, WatchRecord

__all__ = [
    "COMMENT_MAX_LENGTH",
    "LUCK_P_MIN",
    "MAX_PLAYERS_PER_MATCH",
    "OPEN_STATUSES",
    "CancelReason",
    "Confirmation",
    "Evidence",
    "FieldKind",
    "FieldScope",
    "Ladder",
    "LeaderboardScale",
    "LeaderboardSnapshot",
    "MarkKind",
    "Match",
    "MatchComment",
    "MatchField",
    "MatchFieldValue",
    "MatchFormat",
    "MatchSide",
    "MatchStatus",
    "NightlyRun",
    "Outcome",
    "Participant",
    "PlayerMark",
    "PlayerReport",
    "RatingEngine",
    "ReportReason",
    "ReportStatus",
    "SeriesGame",
    "SideAnswer",
    "SnapshotEntry",
    "Suspension",
    "TeamUpdate",
    "WatchRecord",
    "validate_time_zone",
]
