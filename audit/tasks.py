"""The trail's daily sweep."""

from __future__ import annotations

from celery import shared_task

from audit.services import audit_sweep


@shared_task
def sweep_audit_task() -> int:
    """Delete audit entries older than ``AUDIT_KEEP_DAYS``."""
    return audit_sweep()
