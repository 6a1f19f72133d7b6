"""Celery tasks of webhooks: post one delivery, and sweep up the ones whose task went missing.

Both use the project's retry policy (``core.tasks.RETRY``: acknowledged after running,
retried on database errors). A failed POST is not a task error: the delivery records it
and is tried again after its backoff, by a task queued with a countdown when the wait is
short, or by the sweep (every minute) when it is longer than a worker should hold a task.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from core.tasks import RETRY
from webhooks.delivery import delivery_attempt
from webhooks.services import deliveries_due

logger = logging.getLogger(__name__)

COUNTDOWN_MAX = 300  # longer waits are left to the sweep; workers hold counted-down tasks in memory


@shared_task(**RETRY)
def deliver_webhook_task(delivery_id: int) -> str:
    """Post one delivery (if still pending and due) and queue its next attempt if it failed."""
    now = timezone.now()
    attempt = delivery_attempt(delivery_id=delivery_id, now=now)
    if attempt.retry_at is not None:
        wait = (attempt.retry_at - now).total_seconds()
        if wait <= COUNTDOWN_MAX:
            deliver_webhook_task.apply_async((delivery_id,), countdown=wait)
    logger.info("webhook delivery %s: %s", delivery_id, attempt.status)
    return str(attempt.status)


@shared_task(**RETRY)
def deliver_due_webhooks_task() -> int:
    """Every minute: queue the pending deliveries overdue with no task to send them."""
    ids = deliveries_due(now=timezone.now())
    for delivery_id in ids:
        deliver_webhook_task.delay(delivery_id)
    if ids:
        logger.info("webhook sweep: %s overdue deliveries queued", len(ids))
    return len(ids)
