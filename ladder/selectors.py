"""Reads for ladder pages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Q, QuerySet
from django.db.models.functions import Coalesce, Greatest

from ladder.models import Ladder, LeaderboardScale
from ratings.engines import Display
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
    shown: Display
    score: float  # the value of the ladder's leaderboard scale


@dataclass(frozen=True, slots=True)
class Leaderboard:
    ranked: list[LeaderboardRow]
    provisional: list[LeaderboardRow]
    member_count: int


def _scale_value(scale: str, shown: Display) -> float:
    if scale == LeaderboardScale.TR:
        return shown.tr
    if scale == LeaderboardScale.CONSERVATIVE:
        return shown.conservative
    return shown.gxe


def ladder_leaderboard(*, ladder: Ladder, now: datetime, limit: int = 100) -> Leaderboard:
    """Members with their current RD, split into ranked and provisional (SPEC §1, §8).

    Ranked players are sorted by the ladder's display scale and numbered; provisional
    players are listed by rating without a rank.
    """
    members = list(
        PlayerRating.objects.members().filter(ladder=ladder).select_related("player").order_by("-rating", "id")
    )
    ranked: list[tuple[float, PlayerRating, float, Display]] = []
    provisional: list[LeaderboardRow] = []
    for membership in members:
        membership.ladder = ladder
        rd_now = membership.rd_at(now)
        shown = membership.display_at(now)
        value = _scale_value(ladder.leaderboard_scale, shown)
        if shown.provisional:
            provisional.append(LeaderboardRow(rank=None, rating=membership, rd_now=rd_now, shown=shown, score=value))
        else:
            ranked.append((value, membership, rd_now, shown))
    ranked.sort(key=lambda row: (-row[0], -row[1].rating, row[1].pk))
    rows = [
        LeaderboardRow(rank=index, rating=membership, rd_now=rd_now, shown=shown, score=value)
        for index, (value, membership, rd_now, shown) in enumerate(ranked[:limit], start=1)
    ]
    return Leaderboard(ranked=rows, provisional=provisional[:limit], member_count=len(members))
