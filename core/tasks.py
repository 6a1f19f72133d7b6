"""The Celery retry policy every app's ``tasks.py`` uses.

A task is acknowledged only after it has run (``acks_late``), so a worker lost mid-task
leaves it to another, and it is retried with exponential backoff on database errors (a
lost connection, a failover, a deadlock victim); the services make a second run harmless.
"""

from __future__ import annotations

from typing import Any

from django.db import DatabaseError

RETRY_BACKOFF_MAX = 600

RETRY: dict[str, Any] = {
    "acks_late": True,
    "autoretry_for": (DatabaseError,),
    "retry_backoff": True,
    "retry_backoff_max": RETRY_BACKOFF_MAX,
    "retry_jitter": True,
    "max_retries": 5,
}
