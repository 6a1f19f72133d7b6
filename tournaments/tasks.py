"""The tournaments' Celery task: a thin wrapper over ``tournaments_sweep``, safe to run twice."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from core.tasks import RETRY
from tournaments.services import tournaments_sweep


@shared_task(**RETRY)
def sweep_tournaments_task() -> dict[str, int]:
    """Every minute: open check-ins, start the tournaments due, pair the next rounds."""
    swept = tournaments_sweep(now=timezone.now())
    return {"started": swept.started, "advanced": swept.advanced, "check_ins": swept.check_ins}
