"""A small cast for season tests: a ladder with ranked players and seasons around now."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from ladder.models import Ladder
from ratings.models import PlayerRating
from seasons.models import Season, SeasonStatus
from tests.factories import member


def ranked_members(ladder: Ladder, ratings: list[float], *, prefix: str = "s", at: datetime | None = None) -> list:
    """Members with these ratings, RD 60 as of ``at``, ten games and a game just before ``at``: all ranked."""
    at = at or timezone.now()
    users = []
    for number, rating in enumerate(ratings):
        user = member(ladder, f"{prefix}{number:02d}")
        PlayerRating.objects.filter(ladder=ladder, player=user).update(
            rating=rating, rd=60.0, rd_as_of=at, games=10, wins=5, losses=5, last_played_at=at - timedelta(hours=1)
        )
        users.append(user)
    return users


def season(ladder: Ladder, name: str, starts: datetime, ends: datetime, status: str = SeasonStatus.RUNNING) -> Season:
    return Season.objects.create(ladder=ladder, name=name, starts_at=starts, ends_at=ends, status=status)
