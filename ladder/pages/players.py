"""A player in one ladder: their standing, rating history, rank history and matches."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import OuterRef, QuerySet, Subquery

from accounts.models import User
from core.numbers import signed
from ladder.matches.notes import readable_note
from ladder.matches.reads import MatchSummary, PlayerLine, match_summaries, matches_with_details
from ladder.models import (
    Ladder,
    Match,
    MatchStatus,
)
from ladder.standings.leaderboard import LeaderboardRow, ladder_player_row
from ladder.standings.ranking import scale_value
from ladder.standings.snapshots import RankHistoryPoint, player_rank_history
from ratings.models import AdjustmentKind, PlayerRating, RatingAdjustment, RatingChange, ReplayJob, ReplayJobKind

PLAYER_MATCHES_PAGE_SIZE = 20


@dataclass(frozen=True, slots=True)
class PlayerMatchRow:
    """One match in a player's list, from the player's point of view."""

    summary: MatchSummary
    outcome: str
    partners: list[User]
    opponents: list[User]
    line: PlayerLine
    note: str = ""  # the moderator's decisions on the match, in sentences

    @property
    def at(self) -> datetime:
        return self.summary.match.played_at


@dataclass(frozen=True, slots=True)
class AdjustmentRow:
    """A moderator's rating adjustment, or its withdrawal, among a player's matches."""

    at: datetime
    sentence: str  # what was done and why
    delta: float  # the change to the rating it made (a withdrawal: the change it undid)
    rating_after: float | None  # None once withdrawn (a replay rewrote the ratings)
    withdrawn: bool = False  # an adjustment later withdrawn (its own row stays, marked)
    is_adjustment: bool = True  # lets the template tell these rows from matches

    @property
    def delta_label(self) -> str:
        return signed(self.delta)

    @property
    def trend(self) -> str:
        return "up" if self.delta > 0 else "down" if self.delta < 0 else ""


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
    row = ladder_player_row(ladder=ladder, player_id=player.pk, now=now)
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
            reasons=("left the ladder",) if not rating.is_active else ("not listed: suspended or banned",),
        )
    history = list(
        RatingChange.objects.all()
        .filter(ladder=ladder, player=player)
        .select_related("event")
        .order_by("event_id", "id")
    )
    played = (
        Match.objects.filter(ladder=ladder, participants__player=player)
        .exclude(status=MatchStatus.SCHEDULED)
        .order_by("-played_at", "-id")
    )
    matches = matches_with_details(played)
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
                note=readable_note(summary.match.moderator_note, _names(summary)),
            )
        )
    page_obj.object_list = _with_adjustments(rows, page_obj, played, _adjustment_rows(ladder, player, history))
    ranks = player_rank_history(ladder=ladder, player=player)
    return PlayerStanding(row=row, history=history, matches=page_obj, ranks=ranks)


def _names(summary: MatchSummary) -> list[list[str]]:
    return [[line.player.username for line in side.players] for side in summary.sides]


def _adjustment_rows(ladder: Ladder, player: User, history: list[RatingChange]) -> list[AdjustmentRow]:
    """The player's moderator adjustments and their withdrawals, in one query.

    Queue clock resets are adjustments too, but change no rating: the list leaves them out.
    """
    withdrawals = ReplayJob.objects.filter(kind=ReplayJobKind.WITHDRAW, from_event__adjustment=OuterRef("pk"))
    first = withdrawals.order_by("created_at")
    adjustments = (
        RatingAdjustment.objects.filter(
            ladder=ladder, player=player, kind__in=[AdjustmentKind.MANUAL, AdjustmentKind.REFUND]
        )
        .select_related("rating_event")
        .annotate(
            withdrawn_at=Subquery(first.values("created_at")[:1]),
            withdrawn_reason=Subquery(first.values("reason")[:1]),
            withdrawn_by=Subquery(first.values("requested_by__username")[:1]),
        )
    )
    current = {change.event_id: change for change in history}
    rows = []
    for adjustment in adjustments:
        change = current.get(adjustment.rating_event.pk)
        withdrawn = not adjustment.rating_event.is_active
        delta = change.delta if change is not None else adjustment.rating_delta
        rows.append(
            AdjustmentRow(
                at=adjustment.created_at,
                sentence=_adjusted(adjustment),
                delta=delta,
                rating_after=None if withdrawn or change is None else change.rating_after,
                withdrawn=withdrawn,
            )
        )
        if withdrawn and adjustment.withdrawn_at is not None:
            rows.append(
                AdjustmentRow(
                    at=adjustment.withdrawn_at,
                    sentence=_withdrawn(adjustment, delta),
                    delta=-delta,
                    rating_after=None,
                )
            )
    return rows


def _reason(reason: str) -> str:
    reason = reason.strip()
    return reason if reason.endswith((".", "!", "?")) else f"{reason}."


def _adjusted(adjustment: RatingAdjustment) -> str:
    """ "Rating adjusted by a moderator: +50, RD set to 80. Reason: …" """
    parts = [f"{signed(adjustment.rating_delta)}"] if adjustment.rating_delta else []
    if adjustment.new_rd is not None:
        parts.append(f"RD set to {adjustment.new_rd:.0f}")
    return f"Rating adjusted by a moderator: {', '.join(parts) or 'no change'}. Reason: {_reason(adjustment.reason)}"


def _withdrawn(adjustment: Any, delta: float) -> str:
    """ "Withdrawn by moderator: the +50 adjustment of 3 Nov no longer counts. Reason: …" """
    who = adjustment.withdrawn_by or "a moderator"
    when = f"{adjustment.created_at:%-d %b}"
    reason = f" Reason: {_reason(adjustment.withdrawn_reason)}" if adjustment.withdrawn_reason.strip() else ""
    return f"Withdrawn by {who}: the {signed(delta)} adjustment of {when} no longer counts.{reason}"


def _with_adjustments(
    rows: list[PlayerMatchRow], page: Page[Any], played: QuerySet[Match], adjustments: list[AdjustmentRow]
) -> list[PlayerMatchRow | AdjustmentRow]:
    """The page's matches with the adjustments made between them, newest first.

    A page covers the time from its last match (the oldest; none on the last page) up to
    the match before the page (none on the first page), so each adjustment is on one page.
    """
    newer = played.values_list("played_at", flat=True)[page.start_index() - 2] if page.number > 1 else None
    older = rows[-1].at if rows and page.has_next() else None
    inside = [a for a in adjustments if (newer is None or a.at < newer) and (older is None or a.at >= older)]
    merged: list[PlayerMatchRow | AdjustmentRow] = [*rows, *inside]
    merged.sort(key=lambda row: row.at, reverse=True)  # stable: matches keep their order
    return merged
