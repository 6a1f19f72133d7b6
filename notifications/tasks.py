"""Celery tasks of notifications: thin wrappers over ``notifications.mail``, safe to run twice.

``send_notification_mails_task`` is kicked on commit by every ``notify`` that leaves a
pending row, and runs every minute from beat as well, in case a kick was lost (a broker
outage, a worker killed mid-task) and to try again the mails the SMTP server did not take.
``send_digests_task`` runs daily from beat. Both send through SMTP themselves, on the mail
queue (``CELERY_TASK_ROUTES``).
"""

from __future__ import annotations

import logging

from celery import shared_task

from core.tasks import RETRY
from notifications.mail import digests_send, mails_send_pending

logger = logging.getLogger(__name__)


@shared_task(**RETRY)
def send_notification_mails_task() -> dict[str, int]:
    """Mail pending notifications that are wanted at once; keep the rest for the digest or skip them."""
    run = mails_send_pending()
    if run.batches or run.sent or run.retrying or run.failed:
        logger.info(
            "notification mails: %s sent, %s kept for the digest, %s skipped, %s to try again, %s failed",
            run.sent,
            run.digest,
            run.skipped,
            run.retrying,
            run.failed,
        )
    return run.as_dict()


@shared_task(**RETRY)
def send_digests_task() -> dict[str, int]:
    """Mail each player with notifications kept for the digest one mail listing them."""
    mails, rows = digests_send()
    logger.info("notification digests: %s mails listing %s notifications", mails, rows)
    return {"mails": mails, "rows": rows}
