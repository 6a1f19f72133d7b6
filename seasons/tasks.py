"""The seasons' Celery task: a thin wrapper over ``seasons_close_due``, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from core.tasks import RETRY
from seasons.services import season_notify, seasons_close_due

logger = logging.getLogger(__name__)


@shared_task(**RETRY)
def close_due_seasons_task() -> int:
    """Hourly: close every season whose end has passed (oldest first) and start the seasons now due."""
    results = seasons_close_due(now=timezone.now())
    closed = [result for result in results if result.closed]
    for result in closed:
        logger.info(
            "closed season %s of ladder %s: %s ranked, %s badges",
            result.season.pk,
            result.season.ladder_id,
            result.ranked,
            result.badges,
        )
    return len(closed)


@shared_task(**RETRY)
def season_notify_task(season_id: int) -> int:
    """After a close commits: tell each ranked player their final rank; a retry tells nobody twice."""
    return season_notify(season_id=season_id)
