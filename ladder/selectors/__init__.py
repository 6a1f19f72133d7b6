"""Reads for ladder pages.

Pages get plain view-models from here (rows with the numbers and labels already worked
out), so templates only lay them out and every page's query count stays constant
whatever the number of players, sides or matches.
"""

from __future__ import annotations

from ladder.ranking import unranked_reasons
from ladder.selectors.ladders import (
    ladder_list_with_activity,
)
from ladder.selectors.leaderboard import (
    BOT_FILTERS,
    LEADERBOARD_PAGE_SIZE,
    Leaderboard,
    LeaderboardRow,
    ladder_leaderboard,
    ladder_leaderboard_cached,
    ladder_leaderboard_in_order,
    ladder_movers_cached,
    ladder_order_cached,
    ladder_standings,
)
from ladder.selectors.leaderboard_sql import (
    ORDER_ROW,
    Found,
    LeaderboardOrder,
    ladder_order,
    ladder_state,
)
from ladder.selectors.matches import (
    MatchSummary,
    PlayerLine,
    SideLine,
    match_summaries,
    match_summary,
    matches_awaiting,
    matches_with_details,
    side_outcome,
    written_match_summary,
)
from ladder.selectors.players import (
    PLAYER_MATCHES_PAGE_SIZE,
    PlayerMatchRow,
    PlayerStanding,
    player_standing,
)

__all__ = [
    "BOT_FILTERS",
    "LEADERBOARD_PAGE_SIZE",
    "ORDER_ROW",
    "PLAYER_MATCHES_PAGE_SIZE",
    "Found",
    "Leaderboard",
    "LeaderboardOrder",
    "LeaderboardRow",
    "MatchSummary",
    "PlayerLine",
    "PlayerMatchRow",
    "PlayerStanding",
    "SideLine",
    "ladder_leaderboard",
    "ladder_leaderboard_cached",
    "ladder_leaderboard_in_order",
    "ladder_list_with_activity",
    "ladder_movers_cached",
    "ladder_order",
    "ladder_order_cached",
    "ladder_standings",
    "ladder_state",
    "match_summaries",
    "match_summary",
    "matches_awaiting",
    "matches_with_details",
    "player_standing",
    "side_outcome",
    "unranked_reasons",
    "written_match_summary",
]
