"""The list of ladders with their activity."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Greatest

from ladder.models import (
    Ladder,
)
from ladder.standings.ranking import listed_q
from ratings.models import PlayerRating


def listed_member_count(*, now: datetime) -> Coalesce:
    """A ladder's listed members (``ranking.listed_q``: not banned, not suspended), to annotate ladders."""
    listed = PlayerRating.objects.filter(listed_q(now), ladder_id=OuterRef("pk"))
    counted = listed.order_by().values("ladder_id").annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted), 0)


def ladder_list_with_activity(*, now: datetime) -> QuerySet[Ladder]:
    """Listed ladders with their member count, recent activity and last activity time."""
    week_ago = now - timedelta(days=7)
    active = Q(ratings__is_active=True)
    return Ladder.objects.listed().annotate(
        player_count=listed_member_count(now=now),
        active_this_week=Count(
            "ratings",
            filter=active & (Q(ratings__last_played_at__gte=week_ago) | Q(ratings__joined_at__gte=week_ago)),
        ),
        last_activity=Max(Greatest("ratings__joined_at", Coalesce("ratings__last_played_at", "ratings__joined_at"))),
    )
