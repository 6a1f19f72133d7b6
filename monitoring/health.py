"""The checks behind ``/healthz`` and ``/readyz`` (docs/operations.md, "Health and readiness").

``/healthz`` says the process answers and touches nothing. ``/readyz`` runs each check that
applies to this deployment and says which failed:

- ``database``: a ``SELECT 1`` answers;
- ``migrations``: every migration on disk is applied (once it passes, a process does not
  look again: migrations are applied before new code starts, never taken back under it);
- ``redis``: the broker and the cache answer a ``PING``, when they are Redis;
- ``worker``: a Celery worker wrote its heartbeat (``monitoring.heartbeat``) within
  ``READY_WORKER_MINUTES``, when tasks go to workers (not under eager mode);
- ``beat``: no enabled periodic task is overdue by more than ``READY_BEAT_MINUTES`` by its
  own schedule and ``last_run_at``, which the scheduler (``celery beat``, or ``manage.py
  serve`` in the embedded default) writes as it sends each task.

With a read replica (``DATABASE_REPLICA_URL``), the answer also says how it is (``replica``:
whether reads go to it, its state and lag, as ``core.replica.check`` last measured them in
this process). It is not a check: a stopped, unreachable or lagging replica leaves its reads
to the primary, so the site stays ready.

Each answer names only the check, how long it took and, on a failure, the kind of error or
how stale a timestamp is: never an address, a user name or a password. A probe needs
neither a session nor the database's permission tables, and is cheap enough to poll every
few seconds (a handful of small queries).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Max
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from core import replica
from monitoring.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

REDIS_TIMEOUT_SECONDS = 0.5
SHOWN_MIGRATIONS = 5


@dataclass(frozen=True, slots=True)
class Check:
    ok: bool
    ms: float
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": self.ok, "ms": round(self.ms, 1)}
        if self.detail:
            body["detail"] = self.detail
        return body


class _State:
    migrations_applied = False  # set once the migrations check passes in this process
    redis_clients: dict[str, redis.Redis] = {}  # per process, by URL


def _timed(check: Callable[[], str | None]) -> Check:
    """Runs ``check``: it returns None when all is well, or says what is wrong."""
    started = time.perf_counter()
    try:
        problem = check()
    except DatabaseError as exc:
        problem = f"the database failed ({type(exc).__name__})"
    return Check(ok=problem is None, ms=(time.perf_counter() - started) * 1000, detail=problem or "")


def _minutes(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


def database_problem() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        logger.warning("readiness: the database did not answer: %s", exc)
        return f"the database did not answer ({type(exc).__name__})"
    return None


def migrations_problem() -> str | None:
    if _State.migrations_applied:
        return None
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        names = [f"{migration.app_label}.{migration.name}" for migration, _ in plan[:SHOWN_MIGRATIONS]]
        more = f" and {len(plan) - SHOWN_MIGRATIONS} more" if len(plan) > SHOWN_MIGRATIONS else ""
        return f"{len(plan)} not applied: {', '.join(names)}{more}"
    _State.migrations_applied = True
    return None


def redis_urls() -> dict[str, str]:
    """The Redis servers this deployment uses, by role: the broker and the cache, each if Redis."""
    urls: dict[str, str] = {}
    if settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        urls["broker"] = settings.CELERY_BROKER_URL
    cache = settings.CACHES["default"]
    if str(cache.get("LOCATION", "")).startswith(("redis://", "rediss://")):
        urls["cache"] = str(cache["LOCATION"])
    return urls


def redis_problem() -> str | None:
    problems = []
    for role, url in redis_urls().items():
        client = _State.redis_clients.get(url)
        if client is None:
            client = redis.Redis.from_url(
                url, socket_connect_timeout=REDIS_TIMEOUT_SECONDS, socket_timeout=REDIS_TIMEOUT_SECONDS
            )
            _State.redis_clients[url] = client
        try:
            client.ping()
        except redis.RedisError as exc:
            problems.append(f"the {role} did not answer ({type(exc).__name__})")
    return "; ".join(problems) or None


def worker_problem(*, now: datetime) -> str | None:
    newest = WorkerHeartbeat.objects.aggregate(newest=Max("seen_at"))["newest"]
    if newest is None:
        return "no worker has reported yet"
    if now - newest > timedelta(minutes=settings.READY_WORKER_MINUTES):
        return f"no worker seen for {_minutes(now - newest)}"
    return None


def beat_problem(*, now: datetime) -> str | None:
    """The enabled periodic task most overdue, if more than ``READY_BEAT_MINUTES``.

    A task never run counts from when it was last changed, as django-celery-beat's scheduler
    does. The scheduler writes ``last_run_at`` in batches (every 3 minutes), so the limit must
    exceed that plus the shortest period.
    """
    worst: tuple[timedelta, str] | None = None
    tasks = PeriodicTask.objects.filter(enabled=True, one_off=False, clocked__isnull=True).select_related(
        "interval", "crontab", "solar"
    )
    for task in tasks:
        if task.start_time is not None and task.start_time > now:
            continue
        last = task.last_run_at or task.date_changed
        overdue = -task.schedule.remaining_estimate(last)
        if worst is None or overdue > worst[0]:
            worst = (overdue, task.name)
    if worst is not None and worst[0] > timedelta(minutes=settings.READY_BEAT_MINUTES):
        return f"the periodic task “{worst[1]}” has been due for {_minutes(worst[0])}"
    return None


def readiness() -> tuple[bool, dict[str, dict[str, Any]]]:
    """Every check that applies here, by name, and whether all passed."""
    checks: dict[str, Check] = {"database": _timed(database_problem)}
    if checks["database"].ok:
        checks["migrations"] = _timed(migrations_problem)
    if redis_urls():
        checks["redis"] = _timed(redis_problem)
    if checks["database"].ok:
        now = timezone.now()
        if settings.READY_WORKER_MINUTES and not settings.CELERY_TASK_ALWAYS_EAGER:
            checks["worker"] = _timed(lambda: worker_problem(now=now))
        if settings.READY_BEAT_MINUTES:
            checks["beat"] = _timed(lambda: beat_problem(now=now))
    return all(check.ok for check in checks.values()), {name: check.as_dict() for name, check in checks.items()}


def replica_report() -> dict[str, Any] | None:
    """How the read replica is, when there is one (not part of readiness: see the module docstring)."""
    if not replica.configured():
        return None
    return replica.check().as_dict()
