"""Celery tasks of the API: thin wrappers over its services, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task

from api import idempotency
from core.tasks import RETRY

logger = logging.getLogger(__name__)


@shared_task(**RETRY)
def expire_idempotency_keys_task() -> int:
    """Hourly: forget the reports' Idempotency-Keys older than ``API_IDEMPOTENCY_KEY_HOURS``."""
    count = idempotency.expire()
    logger.info("forgot %s idempotency keys", count)
    return count
