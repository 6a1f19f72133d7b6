"""Celery tasks of the matchmaking queue: thin wrappers over services, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import DatabaseError

from matchmaking.services import queue_sweep

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, autoretry_for=(DatabaseError,), retry_backoff=True, max_retries=3)
def sweep_queue_task() -> dict[str, int]:
    """Expire timed-out searches (restarting their RD clock) and drop abandoned ones."""
    stats = queue_sweep()
    logger.info("queue sweep: %s expired, %s left", stats.expired, stats.left)
    return {"expired": stats.expired, "left": stats.left}
