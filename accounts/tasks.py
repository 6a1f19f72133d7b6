"""Celery tasks of accounts: thin wrappers over its services, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from accounts.mail import password_reset_mails_send
from accounts.sessions import sessions_sweep
from accounts.throttling import login_records_expire
from core.tasks import RETRY

logger = logging.getLogger(__name__)


@shared_task(**RETRY)
def send_password_reset_task(email: str) -> None:
    """Mail a password-reset link to the accounts with this address, if any.

    Run twice, it sends a second mail whose link works as well as the first.
    """
    if not email or "@" not in email:  # the view checked it; a message queued by hand may not be
        logger.warning("password reset asked for an address that is not one")
        return
    password_reset_mails_send(email=email)


@shared_task(**RETRY)
def expire_login_attempts_task() -> None:
    """Delete the login throttle's records (raw client addresses) past their cool-off.

    Run twice, the second run deletes nothing more.
    """
    deleted = login_records_expire(now=timezone.now())
    if deleted:
        logger.info("deleted %d expired login attempt records", deleted)


@shared_task(**RETRY)
def sweep_sessions_task() -> None:
    """Forget the rows of sessions past their lifetime (``accounts.sessions``); twice, the second deletes nothing."""
    deleted = sessions_sweep(now=timezone.now())
    if deleted:
        logger.info("forgot %d expired sessions", deleted)
