"""The nightly job on the embedded default (SQLite, ``make run``), in a fresh process.

The suite runs on PostgreSQL; the embedded default has no set-based SQL for RDs, so the
job materialises and ranks in Python there. This runs it end to end on SQLite.
"""

from __future__ import annotations

import shutil

from tests.test_settings import run

SCRIPT = """
import django, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
from datetime import timedelta
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
call_command("migrate", verbosity=0)
assert connection.vendor == "sqlite"
from accounts.models import User
from ladder.models import Ladder, LeaderboardSnapshot
from ladder.standings.leaderboard import ladder_standings
from ladder.standings.nightly import ladder_nightly, local_midnight
from ratings.models import PlayerRating
ladder = Ladder.objects.create(name="Chess", slug="chess", game="Chess", time_zone="Europe/Berlin", snapshot_size=2)
now = timezone.now()
midnight = local_midnight(ladder=ladder, at=now)
for n, (rating, rd, days) in enumerate([(1700, 60, 3), (1650, 40, 1), (1800, 90, 4), (1600, 200, 2)]):
    user = User.objects.create(username=f"p{n}", password="!")
    PlayerRating.objects.create(ladder=ladder, player=user, rating=rating, rd=rd, volatility=0.06, games=9, wins=9,
                                rd_as_of=midnight - timedelta(days=days), last_played_at=midnight - timedelta(days=days))
before = {r.pk: r.state() for r in PlayerRating.objects.all()}
engine = ladder.get_engine()
result = ladder_nightly(ladder=ladder, midnight=midnight)
again = ladder_nightly(ladder=ladder, midnight=midnight)
assert result.ran and not again.ran and result.materialised == 4
for row in PlayerRating.objects.all():
    assert row.rd == engine.rd_at(before[row.pk], midnight.timestamp()) and row.rd_as_of == midnight
ranked, unranked = ladder_standings(ladder=ladder, now=midnight)
snapshot = LeaderboardSnapshot.objects.get()
assert [e.player_id for e in snapshot.entries.order_by("rank")] == [r.rating.player_id for r in ranked[:2]]
assert (snapshot.ranked_count, snapshot.provisional_count, snapshot.member_count) == (3, 1, 4)
print("ok", result.snapshot_rows)
"""


def test_nightly_job_runs_on_the_embedded_sqlite_default(tmp_path, embedded_database):
    shutil.copy(embedded_database, tmp_path / "db.sqlite3")  # migrated once per run: migrate applies nothing
    result = run(["-c", SCRIPT], {"LADDER_VAR_DIR": str(tmp_path)})

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["ok", "2"]
