"""A player in one ladder: their standing, rating history, rank history and matches."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.paginator import Page, Paginator

from accounts.models import User
from core import db
from ladder.models import (
    Ladder,
    Match,
    MatchStatus,
)
from ladder.ranking import scale_value
from ladder.selectors.leaderboard import LeaderboardRow, ladder_standings, rows_of
from ladder.selectors.leaderboard_sql import standings_sql
from ladder.selectors.matches import MatchSummary, PlayerLine, match_summaries, matches_with_details
from ladder.snapshots import RankHistoryPoint, player_rank_history
from ratings.models import PlayerRating, RatingChange

PLAYER_MATCHES_PAGE_SIZE = 20


@dataclass(frozen=True, slots=True)
class PlayerMatchRow:
    """One match in a player's list, from the player's point of view."""

    summary: MatchSummary
    outcome: str
    partners: list[User]
    opponents: list[User]
    line: PlayerLine


@dataclass(frozen=True, slots=True)
class PlayerStanding:
    row: LeaderboardRow  # rank (None if unranked), RD now, display values, reasons
    history: list[RatingChange]  # current changes, in the order they were applied
    matches: Page  # of PlayerMatchRow
    ranks: list[RankHistoryPoint] = field(default_factory=list)  # rank in each snapshot holding the player

    @property
    def best_rank(self) -> RankHistoryPoint | None:
        """The best rank in the snapshots; the earliest day it was reached."""
        return min(self.ranks, key=lambda point: (point.rank, point.date)) if self.ranks else None

    @property
    def rating(self) -> PlayerRating:
        return self.row.rating


def player_standing(
    *, ladder: Ladder, player: User, now: datetime, page: int | str | None = 1
) -> PlayerStanding | None:
    """``player``'s rating, rank, rating history and matches in ``ladder``; None if never a member.

    The rank needs the whole ladder's standings (one query); the history is every
    current ``RatingChange`` (the chart plots them all and the match list takes its
    deltas from them), and the match list is one paginated page.
    """
    if db.on_postgresql():
        _, found = standings_sql(ladder=ladder, now=now, player_id=player.pk)
        row = rows_of(ladder=ladder, now=now, found=found)[0] if found else None
    else:
        ranked, unranked = ladder_standings(ladder=ladder, now=now)
        row = next((r for r in ranked + unranked if r.rating.player_id == player.pk), None)
    if row is None:
        rating = PlayerRating.objects.filter(ladder=ladder, player=player).first()
        if rating is None:
            return None
        rating.ladder = ladder
        rating.player = player
        rd_now = rating.rd_at(now)
        shown = rating.display_at(now)
        row = LeaderboardRow(
            rank=None,
            rating=rating,
            rd_now=rd_now,
            shown=shown,
            score=scale_value(ladder.leaderboard_scale, shown),
            reasons=("left the ladder",),
        )
    history = list(
        RatingChange.objects.all()
        .filter(ladder=ladder, player=player)
        .select_related("event")
        .order_by("event_id", "id")
    )
    matches = matches_with_details(
        Match.objects.filter(ladder=ladder, participants__player=player)
        .exclude(status=MatchStatus.SCHEDULED)
        .order_by("-played_at", "-id")
    )
    page_obj: Page[Any] = Paginator(matches, PLAYER_MATCHES_PAGE_SIZE).get_page(page)  # of matches, then of rows
    rows = []
    for summary in match_summaries(page_obj.object_list):
        own = summary.side_of(player.pk)
        if own is None:  # pragma: no cover - the query selects matches the player is in
            continue
        line = next(line for line in own.players if line.player.pk == player.pk)
        rows.append(
            PlayerMatchRow(
                summary=summary,
                outcome=own.outcome,
                partners=[line.player for line in own.players if line.player.pk != player.pk],
                opponents=[line.player for side in summary.sides if side is not own for line in side.players],
                line=line,
            )
        )
    page_obj.object_list = rows
    ranks = player_rank_history(ladder=ladder, player=player)
    return PlayerStanding(row=row, history=history, matches=page_obj, ranks=ranks)
