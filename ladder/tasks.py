"""Celery tasks of the ladder domain: thin wrappers over services, safe to run twice.

Each is acknowledged only after it has run (``acks_late``), so a worker lost mid-task
leaves it to another, and retried with exponential backoff on database errors (a lost
connection, a failover, a deadlock victim); the services make a second run harmless.
"""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task
from django.core.exceptions import ValidationError
from django.utils import timezone

from core.tasks import RETRY
from ladder.matches.reporting import match_confirm_overdue, match_remind_unanswered
from ladder.models import Ladder
from ladder.standings.nightly import ladder_nightly, nightly_due

logger = logging.getLogger(__name__)


@shared_task(**RETRY)
def confirm_overdue_matches_task() -> int:
    """Every 5 minutes: remind those who have yet to answer a result that confirms itself
    within two hours, then confirm and rate the results nobody answered in time."""
    reminded = match_remind_unanswered()
    count = match_confirm_overdue()
    logger.info("reminded %s players, confirmed %s overdue matches", reminded, count)
    return count


@shared_task(**RETRY)
def run_nightly_task() -> int:
    """Hourly: start the nightly job of every ladder whose local midnight passed since its last run.

    Each ladder is its own task, so several workers share a night's work and a failure
    in one ladder retries that ladder alone.
    """
    due = nightly_due(now=timezone.now())
    for ladder, midnight in due:
        run_ladder_nightly_task.delay(ladder.pk, midnight.isoformat())
    logger.info("nightly job: %s ladders due", len(due))
    return len(due)


@shared_task(**RETRY)
def run_ladder_nightly_task(ladder_id: int, midnight: str) -> dict[str, object]:
    """Materialise one ladder's RDs at ``midnight`` (ISO 8601) and snapshot its leaderboard."""
    ladder = Ladder.objects.filter(pk=ladder_id).first()
    if ladder is None:
        logger.warning("nightly job: no ladder %s", ladder_id)
        return {"ran": False}
    try:
        result = ladder_nightly(ladder=ladder, midnight=datetime.fromisoformat(midnight))
    except ValidationError as exc:
        logger.warning("nightly job of %s for %s refused: %s", ladder.slug, midnight, " ".join(exc.messages))
        return {"ran": False}
    if not result.ran:  # the figures are the earlier run's: say whose, not as if this run had them
        logger.info(
            "nightly job of %s for %s: already done by run %s, started %s; nothing changed",
            ladder.slug,
            result.date,
            result.run_id,
            result.started_at.isoformat(),
        )
        return {"ran": False, "done_by_run": result.run_id}
    logger.info(
        "nightly job of %s for %s: %s ratings materialised in %.2f s, %s ranked players snapshot in %.2f s",
        ladder.slug,
        result.date,
        result.materialised,
        result.materialise_seconds,
        result.snapshot_rows,
        result.snapshot_seconds,
    )
    return {"ran": result.ran, "materialised": result.materialised, "snapshot_rows": result.snapshot_rows}
