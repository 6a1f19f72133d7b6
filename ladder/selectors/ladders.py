"""The list of ladders with their activity."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count, Max, Q, QuerySet
from django.db.models.functions import Coalesce, Greatest

from ladder.models import (
    Ladder,
)


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
