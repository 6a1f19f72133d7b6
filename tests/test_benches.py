"""Every benchmark under bench/ runs to a clean end: exit status 0, its figures printed.

Each runs briefly (small sizes through its own flags) as a subprocess, on the suite's
PostgreSQL: in a scratch copy of the test database (``BENCH_TEMPLATE_DATABASE``, so none
migrates again) that it drops on the way out, and on the suite's Redis where it wants a cache or a
broker (bench/webhooks.py's Celery worker).
A benchmark that needs a tool this machine lacks (``wrk``) must say so in one line and exit 1.
The figures are not judged here: bench/ and docs/benchmarks.md are for that.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connections

# The test database must exist (it is copied): the mark asks pytest-django for it.
pytestmark = [pytest.mark.bench, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
TIMEOUT = 300

# Each benchmark's smallest useful run, and a line of the figures it must print.
RUNS: dict[str, tuple[str, str]] = {
    "api.py": (
        "--players 40 --matches 40 --workers 1 --clients 2 --seconds 1 --warmup 0.2",
        r"leaderboard page \(cached 5 s\) +\d+(.|\n)*PostgreSQL's CPU a report [\d.]+ ms, target ≤ 2 ms: (met|missed)",
    ),
    "backtest.py": ("--matches 3000 --players 200", r"tuning \d+ parameter sets over 3,000 matches"),
    "engines.py": ("--games 300 --rounds 1", r"tgr 1v1 +[\d,]+ +[\d.]+"),
    "ladder_page.py": ("--players 40 --workers 1 --clients 2 --seconds 1 --warmup 0.2", r"\d+ *ms"),
    "lifecycle.py": ("--players 20 --matches 10 --sample 5 --warmup 2 --workers 0", r"\d+ *ms"),
    "matchmaking_queue.py": (
        "--waiting 1300 --lonely 3 --crowded 2 --probes 1 --joins 10 --pair-calls 10 --polls 10 --sample 3 "
        "--warmup 2 --workers",
        r"queue_join, all +10 ",
    ),
    "nightly.py": ("--ratings 300 --nights 1 --snapshot-size 50", r"materialisation, first night"),
    "replay.py": ("--players 20 --matches 200 --runs 1", r"replay 1: .* matches/s"),
    "report.py": (
        "--players 20 --matches 20 --two-step 10 --sample 5 --warmup 2 --rounds 1 --server-cpu 20",
        r"trusted report: PostgreSQL's CPU, [\d.]+ ms a match, by statement",
    ),
    "season_close.py": ("--players 200 --history 1", r"close: \d+ standings"),
    "stats.py": ("--players 30 --matches 300 --runs 2", r"stats page \?field=map .* ms"),
    "team_queue.py": (
        "--waiting 1300 --lonely 3 --short 2 --joins 10 --polls 10 --sample 3 --warmup 2 --workers",
        r"queue_join of .*, a game formed",
    ),
    "tournaments.py": (
        "--players 60 --rounds 3 --standings-rounds 3 --runs 1 --bracket-players 8 --bracket-waves 2",
        r"Swiss round of 60 players after 3 rounds +best +[\d.]+ ms(.|\n)*bracket page, 8 entries, \d+ games +best"
        r"(.|\n)*the first visit after a result \(cache emptied\) +best",
    ),
    "webhooks.py": ("--deliveries 20", r"one Celery worker \(solo\), commit to last delivered +20"),
}
NEEDS_WRK = {"ladder_page.py"}


def test_every_benchmark_is_run_here():
    assert set(RUNS) == {path.name for path in BENCH.glob("[!_]*.py")}


def server_url(database: str) -> str:
    db = settings.DATABASES["default"]
    user = quote(db["USER"] or "", safe="")
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{database}"


@pytest.fixture(scope="module")
def template(django_db_setup, django_db_blocker) -> Iterator[str]:
    """A copy of the migrated database the test databases are copied from (``TEST["TEMPLATE"]``,
    tests/database_template.py) that nobody connects to, for the benchmarks to copy.
    CREATE DATABASE … TEMPLATE wants its template to have no session, and the worker's own test
    database may have one the test cannot close: a live server's thread, kept from a browser test."""
    import psycopg
    from psycopg import sql

    name = f"ladder_bench_template_{os.getpid()}"
    with django_db_blocker.unblock():
        settings_dict = connections["default"].settings_dict
        test_database = settings_dict["TEST"].get("TEMPLATE") or settings_dict["NAME"]
        connections.close_all()
    with psycopg.connect(server_url("postgres").replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(test_database))
        )
        try:
            yield name
        finally:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_benchmark_runs_to_a_clean_end(name, template):
    arguments, figures = RUNS[name]
    env = {key: value for key, value in os.environ.items() if key not in ("DEBUG", "DJANGO_SETTINGS_MODULE")}
    env.update(DATABASE_URL=server_url("postgres"), BENCH_TEMPLATE_DATABASE=template, BENCH_REFERENCE_SECONDS="0.2")
    done = subprocess.run(
        [sys.executable, str(BENCH / name), *arguments.split()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    output = f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    if name in NEEDS_WRK and not shutil.which("wrk"):
        assert done.returncode == 1, output
        assert done.stderr.strip().splitlines()[-1] == "error: wrk is not installed (apt-get install wrk)", output
        return
    assert done.returncode == 0, output
    assert "Traceback" not in done.stderr, output
    assert re.search(figures, done.stdout), output
    assert not re.search(r"\b5\d\d: \d", done.stdout), f"answers with a server error\n{output}"
