"""The API's leaderboard is the same whether PostgreSQL ranks it or its ORM twin does.

On PostgreSQL a plain page is cut from the ladder's cached ranking (``ladder_order``);
on other databases, and under ``core.db.orm_twins()``, each page is ranked in Python.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.cache import cache

from core import db
from ladder.models import LeaderboardScale
from ratings.models import PlayerRating
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize("scale", [LeaderboardScale.GXE, LeaderboardScale.CONSERVATIVE])
def test_leaderboard_pages_are_the_same_from_sql_and_from_the_orm_twin(api, scale):
    ladder = LadderFactory(leaderboard_scale=scale, ranked_min_games=3, ranked_max_idle_days=10)
    users = bulk_users(f"twin-{scale}-", 23)
    PlayerRating.objects.bulk_create(
        PlayerRating(
            ladder=ladder,
            player=user,
            rating=1500.0 + 50.0 * (n % 5),  # ties on rating
            rd=[50.0, 75.0, 100.0, 120.0][n % 4],  # 120: provisional
            volatility=0.06,
            rd_as_of=NOW - timedelta(days=n % 3),
            games=n % 7,  # fewer than 3: not ranked
            last_played_at=None if n == 4 else NOW - timedelta(days=n % 12),  # 11 days: idle, not ranked
            joined_at=NOW - timedelta(days=100),
        )
        for n, user in enumerate(users)
    )
    queries = [{"page_size": 5, "page": page} for page in range(1, 7)] + [{"q": "twin", "page_size": 50}]

    def pages() -> list[dict]:
        cache.clear()
        return [api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/", query).json() for query in queries]

    with time_machine.travel(NOW, tick=False):
        in_sql = pages()
        with db.orm_twins():
            in_python = pages()

    assert in_sql == in_python
    ranks = [row["rank"] for page in in_sql[:5] for row in page["results"]]
    assert ranks[:4] == [1, 2, 3, 4] and None in ranks
