"""The Celery application, configured from Django settings (``CELERY_*`` names).

With no ``CELERY_BROKER_URL`` the settings turn on eager mode, so tasks run in-process
and the site needs no broker (the embedded default).
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery, Task
from celery.signals import task_postrun, task_prerun

from monitoring.heartbeat import WorkerHeartbeatStep

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Publishing gives up after one short timeout while the broker is away (core/broker.py).
app = Celery("ladder", task_cls="core.broker:BoundedPublishTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Each worker writes a heartbeat row that /readyz reads (monitoring/heartbeat.py).
app.steps["consumer"].add(WorkerHeartbeatStep)

# Celery's Django fixup closes every database connection before and after each task, so a
# worker opened a new PostgreSQL connection per task: 6–11 ms, more than a webhook
# delivery's whole work. Keep connections as a web process does: Django's own
# ``close_old_connections`` closes one past ``DATABASE_CONN_MAX_AGE`` or left unusable by an
# error, before and after each task (the fixup still closes them every million tasks).
app.conf["CELERY_DB_REUSE_MAX"] = 1_000_000


@task_prerun.connect
@task_postrun.connect
def _close_old_connections(task: Task | None = None, **kwargs: Any) -> None:
    # An eager task runs inside the caller's request or transaction: its connection is not ours.
    if task is not None and not getattr(task.request, "is_eager", False):
        from django.db import close_old_connections

        close_old_connections()
