"""A ladder of benchmark players, shared by the benchmarks of the match paths.

``make_ladder`` creates the ladder with limits high enough that no fair-play check refuses
(games dated in the past, year-old accounts, report and pair limits of a million), a
trusted reporter (a bot on ``ladder.trusted_reporters``) and ``players`` members, each
joined with ``ladder_join`` as a player would be.
"""

from __future__ import annotations

import random
import time
from datetime import timedelta
from typing import Any

STEP = timedelta(minutes=11)  # more than the 10-minute duplicate window


def now():
    from django.utils import timezone

    return timezone.now()


def make_ladder(players: int, seed: int, *, name: str = "Report bench", prefix: str = "rb", **fields: Any):
    """(ladder, users, reporter); ``fields`` override the ladder's settings (e.g. the queue's)."""
    from django.db import transaction

    from accounts.models import User
    from ladder.membership import ladder_join
    from ladder.models import Ladder

    tag = f"{int(time.time()) % 100_000:05d}{random.Random(seed).randrange(1000):03d}"
    with transaction.atomic():
        # The participants' path runs every fair-play check, none of which refuses: the games are
        # dated in the past (no backdating window), the accounts are old and the limits are high.
        settings = {"backdate_hours": 0, "report_limit_per_hour": 1_000_000, "pair_limit_per_day": 1_000_000}
        ladder = Ladder.objects.create(
            name=f"{name} {tag}",
            slug=f"{name.lower().replace(' ', '-')}-{tag}",
            game="Benchmark",
            **(settings | fields),
        )
        joined = now() - timedelta(days=365)
        users = User.objects.bulk_create(
            User(username=f"{prefix}{tag}_{number}", password="!", date_joined=joined) for number in range(players)
        )
        reporter = User.objects.create(username=f"{prefix}{tag}_server", password="!", is_bot=True)
        ladder.trusted_reporters.add(reporter)
    start = now() - STEP * 100_000
    for user in users:
        ladder_join(ladder=ladder, player=user, now=start - timedelta(days=1))
    return ladder, users, reporter
