"""The nightly job through a real Celery worker and beat, against the suite's real Redis.

A worker and then beat run as subprocesses, as in production, on the suite's test
database and on a queue of their own (so nothing else on that Redis is touched). The
test sends a task through the broker and waits for its effect in the database; then it
gives beat a one-second schedule for the hourly task and waits for the ladders it finds
due. Both processes are stopped (SIGTERM, then SIGKILL) whatever happens.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from unittest.mock import ANY
from urllib.parse import quote

import pytest
import redis
from django.conf import settings
from django.test import Client
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from ladder.models import LeaderboardSnapshot, NightlyRun
from ladder.standings.nightly import local_midnight
from ladder.tasks import run_ladder_nightly_task
from monitoring.models import WorkerHeartbeat
from ratings.models import PlayerRating
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
WAIT_SECONDS = 90


def database_url() -> str:
    """The test database (``test_…``) as a URL for the subprocesses."""
    db = settings.DATABASES["default"]
    user = quote(db["USER"] or "", safe="")
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def celery(
    kind: str,
    queue: str,
    logs: Path,
    *,
    queues: str | None = None,
    name: str | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen]:
    """``celery worker`` or ``celery beat`` with the site's queues named after ``queue``, stopped on
    the way out; a worker reads ``queues`` (default: ``queue``). Its log is ``logs/<name>.log``
    (default: the kind); ``env`` adds to its environment."""
    environment = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CELERY_QUEUE": queue,
        "PYTHONUNBUFFERED": "1",  # its log is read while it runs, and it may end killed
        **(env or {}),
    }
    name = name or kind
    if kind == "worker":
        args = ["worker", "--pool", "solo", "--queues", queues or queue, "--hostname", f"{name}-{queue}@%h"]
        args += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    else:
        args = ["beat", "--max-interval", "1"]
    log = logs / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", *args, "--loglevel", "INFO"],
            cwd=ROOT,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            yield process
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_for(condition: Callable[[], bool], what: str, logs: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    output = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-4000:]}" for log in logs.glob("*.log"))
    pytest.fail(f"waited {WAIT_SECONDS} s for {what}\n{output}")


@pytest.fixture
def queue() -> Iterator[str]:
    name = f"ladder-test-{uuid.uuid4().hex[:12]}"
    yield name
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete(name, *client.keys(f"{name}*"))


def test_a_real_worker_and_beat_run_the_nightly_job_through_redis(queue, tmp_path):
    now = timezone.now()
    home = LadderFactory(name="Home", time_zone="UTC")
    kiwi = LadderFactory(name="Kiwi", time_zone="Pacific/Auckland")
    for ladder in (home, kiwi):
        for user in bulk_users(f"{ladder.pk}-", 5):
            PlayerRating.objects.create(
                ladder=ladder, player=user, rating=1500, rd=80, volatility=0.06, rd_as_of=now - timedelta(days=9)
            )
    yesterday = local_midnight(ladder=home, at=now) - timedelta(days=1)

    assert not run_ladder_nightly_task.app.conf.task_always_eager, "the task must go through the broker"
    with celery("worker", queue, tmp_path):
        # 1. A task sent through Redis: the worker runs it and the database shows it.
        run_ladder_nightly_task.apply_async(args=[home.pk, yesterday.isoformat()], queue=queue)
        wait_for(lambda: NightlyRun.objects.filter(ladder=home, midnight=yesterday).exists(), "the sent task", tmp_path)
        assert set(home.ratings.values_list("rd_as_of", flat=True)) == {yesterday}
        # The worker wrote its heartbeat when it began to consume, so /readyz sees a worker.
        assert WorkerHeartbeat.objects.filter(hostname__startswith=f"worker-{queue}@").exists()
        assert Client().get("/readyz").json()["checks"]["worker"] == {"ok": True, "ms": ANY}

        # 2. Beat with a one-second schedule for the hourly task: it finds both ladders due.
        PeriodicTask.objects.update(enabled=False)
        every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period=IntervalSchedule.SECONDS)
        PeriodicTask.objects.create(
            name="nightly, every second (test)",
            task="ladder.tasks.run_nightly_task",
            interval=every_second,
            queue=queue,
        )
        with celery("beat", queue, tmp_path):
            wait_for(lambda: NightlyRun.objects.count() == 3, "beat's runs of both ladders", tmp_path)

    today = {ladder: local_midnight(ladder=ladder, at=timezone.now()) for ladder in (home, kiwi)}
    assert set(NightlyRun.objects.values_list("ladder__name", "midnight")) == {
        ("Home", yesterday),
        ("Home", today[home]),
        ("Kiwi", today[kiwi]),
    }
    assert set(kiwi.ratings.values_list("rd_as_of", flat=True)) == {today[kiwi]}
    assert LeaderboardSnapshot.objects.filter(ladder=kiwi).count() == 1
    worker_log = (tmp_path / "worker.log").read_text()
    assert worker_log.count("Task ladder.tasks.run_ladder_nightly_task[") >= 6  # received and succeeded, × 3
    assert "Task ladder.tasks.run_nightly_task[" in worker_log
    assert (
        "Sending due task nightly, every second (test) (ladder.tasks.run_nightly_task)"
        in (tmp_path / "beat.log").read_text()
    )
