"""Each Celery worker writes a heartbeat row every ``HEARTBEAT_SECONDS``, read by ``/readyz``.

Celery's own heartbeats are events, sent only with ``-E``, and asking the workers
(``celery inspect ping``) is a broadcast that waits for answers: too slow for a probe polled
every few seconds. So the worker's consumer runs a step of its own (added in
``config/celery.py``): a timer on the consumer's event loop, the loop that fetches tasks,
which upserts the worker's row. It starts once the worker is connected to the broker and
stops when that connection is lost, so a worker that cannot fetch tasks stops reporting too.
With the prefork pool the loop is the main process's and a long task does not hold it; with
``--pool solo`` a task blocks it while it runs.

Nothing here imports Django models at import time: ``config.celery`` imports this module
before Django is set up.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from celery import bootsteps

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 30.0
FORGET_AFTER = timedelta(days=7)


def heartbeat_write(hostname: str) -> None:
    """Upsert this worker's row; rows of workers silent for a week go at the same time."""
    from django.db import DatabaseError, close_old_connections
    from django.utils import timezone

    from monitoring.models import WorkerHeartbeat

    now = timezone.now()
    try:
        close_old_connections()
        WorkerHeartbeat.objects.bulk_create(
            [WorkerHeartbeat(hostname=hostname[:255], seen_at=now)],
            update_conflicts=True,
            unique_fields=["hostname"],
            update_fields=["seen_at"],
        )
        WorkerHeartbeat.objects.filter(seen_at__lt=now - FORGET_AFTER).delete()
    except DatabaseError:
        # The database is away: /readyz says so itself; the next beat tries again.
        logger.warning("the worker heartbeat could not be written", exc_info=True)


class WorkerHeartbeatStep(bootsteps.StartStopStep):
    """A consumer step: the heartbeat timer, from the moment tasks are consumed."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.timer_entry: Any = None

    def start(self, parent: Any) -> None:
        heartbeat_write(parent.hostname)
        self.timer_entry = parent.timer.call_repeatedly(
            HEARTBEAT_SECONDS, heartbeat_write, (parent.hostname,), priority=10
        )

    def stop(self, parent: Any) -> None:
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None

    shutdown = stop
