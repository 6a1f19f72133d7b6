"""The Celery retry policy every app's ``tasks.py`` uses, and the task that sends mail.

A task is acknowledged only after it has run (``acks_late``), so a worker lost mid-task
leaves it to another, and it is retried with exponential backoff on database errors (a
lost connection, a failover, a deadlock victim); the services make a second run harmless.
"""

from __future__ import annotations

import logging
import smtplib
from typing import TypedDict

from celery import shared_task
from django.core.mail import EmailMultiAlternatives
from django.db import DatabaseError

logger = logging.getLogger(__name__)

RETRY_BACKOFF_MAX = 600


class RetryPolicy(TypedDict, total=False):
    """The keyword arguments of ``shared_task`` that make up a retry policy, typed so tasks stay typed."""

    acks_late: bool
    autoretry_for: tuple[type[BaseException], ...]
    retry_backoff: bool
    retry_backoff_max: int
    retry_jitter: bool
    max_retries: int


RETRY: RetryPolicy = {
    "acks_late": True,
    "autoretry_for": (DatabaseError,),
    "retry_backoff": True,
    "retry_backoff_max": RETRY_BACKOFF_MAX,
    "retry_jitter": True,
    "max_retries": 5,
}

# Mail servers go away for minutes at a time (a restart, greylisting answering 4xx): ten
# tries over about 17 minutes, each wait doubling up to RETRY_BACKOFF_MAX. smtplib's
# errors, refused connections and timeouts are all OSErrors.
MAIL_RETRY: RetryPolicy = {**RETRY, "autoretry_for": (DatabaseError, OSError), "max_retries": 10}


@shared_task(**MAIL_RETRY)
def send_mail_task(
    to: list[str], subject: str, body: str, html: str | None = None, headers: dict[str, str] | None = None
) -> int:
    """Send one mail built by ``core.mail.send_templated_mail``; the number of mails sent (0 or 1).

    A server that refuses every recipient for good (5xx) is not asked again: the address is
    wrong, and retrying would not make it right. A second run after a lost acknowledgement
    sends the mail twice, which is better than not at all.
    """
    message = EmailMultiAlternatives(subject=subject, body=body, to=to, headers=headers)
    if html is not None:
        message.attach_alternative(html, "text/html")
    try:
        sent = message.send()
    except smtplib.SMTPRecipientsRefused as exc:
        if all(code >= 500 for code, _ in exc.recipients.values()):
            logger.warning("mail %r not sent: the server refused every recipient (%s)", subject, len(to))
            return 0
        raise
    logger.info("mail %r sent to %s recipients", subject, len(to))
    return sent
