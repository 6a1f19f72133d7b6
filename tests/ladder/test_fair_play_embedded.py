"""The fair-play checks on the embedded default (SQLite, ``make run``), in a fresh process.

The suite runs on PostgreSQL; ``make run`` reports through the same checks on SQLite, which
returns dates differently from raw SQL, so a report, a limit and a hold run there too.
"""

from __future__ import annotations

import shutil

from tests.test_settings import run

SCRIPT = """
import django, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
from datetime import timedelta
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
call_command("migrate", verbosity=0)
assert connection.vendor == "sqlite"
from accounts.models import User
from ladder.models import Ladder
from ladder.membership import ladder_join
from ladder.matches.reporting import match_report
from ladder.matches.checks import SideInput
ladder = Ladder.objects.create(name="Chess", slug="chess", game="Chess", pair_limit_per_day=3,
                               review_unanswered_reports=2)
now = timezone.now()
a, b = (User.objects.create(username=name, password="!", date_joined=now - timedelta(days=9)) for name in "ab")
for user in (a, b):
    ladder_join(ladder=ladder, player=user, now=now - timedelta(days=9))
held = []
for n in range(3):
    at = now + timedelta(minutes=15 * n)
    held.append(match_report(ladder=ladder, reporter=a, sides=[SideInput([a], 1), SideInput([b], 2)], now=at).held_for_review)
try:
    match_report(ladder=ladder, reporter=a, sides=[SideInput([a], 1), SideInput([b], 2)], now=now + timedelta(hours=1))
except ValidationError as error:
    print(error.code, held)
"""


def test_fair_play_runs_on_the_embedded_sqlite_default(tmp_path, embedded_database):
    shutil.copy(embedded_database, tmp_path / "db.sqlite3")  # migrated once per run: migrate applies nothing
    result = run(["-c", SCRIPT], {"LADDER_VAR_DIR": str(tmp_path)})

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["pair_limit", "[False,", "True,", "True]"]
