"""Celery tasks of the matchmaking queue: thin wrappers over services, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import DatabaseError

from matchmaking.lifecycle import sweep_matches
from matchmaking.services import queue_sweep

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, autoretry_for=(DatabaseError,), retry_backoff=True, max_retries=3)
def sweep_queue_task() -> dict[str, int]:
    """Expire timed-out searches (restarting their RD clock) and drop abandoned ones; end paired
    matches whose ready check, play window or no-show claim ran out."""
    stats = queue_sweep()
    settled = sweep_matches()
    logger.info(
        "queue sweep: %s expired, %s left; %s ready checks missed, %s matches expired, %s forfeits",
        stats.expired,
        stats.left,
        settled.ready_missed,
        settled.expired,
        settled.forfeits,
    )
    return {
        "expired": stats.expired,
        "left": stats.left,
        "ready_missed": settled.ready_missed,
        "matches_expired": settled.expired,
        "forfeits": settled.forfeits,
    }
