"""Reads for ladder pages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Q, QuerySet
from django.db.models.functions import Coalesce, Greatest

from ladder.models import Ladder
from ratings.models import PlayerRating


def ladder_list_with_activity(*, now: datetime) -> QuerySet[Ladder]:
    """Listed ladders with their member count, recent activity and last activity time."""
    week_ago = now - timedelta(days=7)
    active = Q(ratings__is_active=True)
    return Ladder.objects.listed().annotate(
        player_count=Count("ratings", filter=active),
        active_this_week=Count(
            "ratings",
            filter=active & (Q(ratings__last_played_at__gte=week_ago) | Q(ratings__joined_at__gte=week_ago)),
        ),
        last_activity=Max(Greatest("ratings__joined_at", Coalesce("ratings__last_played_at", "ratings__joined_at"))),
    )


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int | None
    rating: PlayerRating
    rd_now: float


@dataclass(frozen=True, slots=True)
class Leaderboard:
    ranked: list[LeaderboardRow]
    provisional: list[LeaderboardRow]
    member_count: int


def ladder_leaderboard(*, ladder: Ladder, now: datetime, limit: int = 100) -> Leaderboard:
    """Members split into ranked (current RD at or below the threshold) and provisional.

    Sorting by the ladder's display scale comes with the rating engines' display values;
    until then ranked players are ordered by rating.
    """
    members = list(
        PlayerRating.objects.members()
        .filter(ladder=ladder)
        .select_related("player", "ladder")
        .order_by("-rating", "id")
    )
    ranked: list[LeaderboardRow] = []
    provisional: list[LeaderboardRow] = []
    for membership in members:
        rd_now = membership.rd_at(now)
        if rd_now > ladder.provisional_rd:
            provisional.append(LeaderboardRow(rank=None, rating=membership, rd_now=rd_now))
        elif len(ranked) < limit:
            ranked.append(LeaderboardRow(rank=len(ranked) + 1, rating=membership, rd_now=rd_now))
    return Leaderboard(ranked=ranked, provisional=provisional[:limit], member_count=len(members))
