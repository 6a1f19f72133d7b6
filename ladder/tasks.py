"""Celery tasks of the ladder domain: thin wrappers over services, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import DatabaseError

from ladder.services.matches import match_confirm_overdue

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, autoretry_for=(DatabaseError,), retry_backoff=True, max_retries=5)
def confirm_overdue_matches_task() -> int:
    """Confirm and rate results nobody answered within their ladder's window."""
    count = match_confirm_overdue()
    logger.info("confirmed %s overdue matches", count)
    return count
