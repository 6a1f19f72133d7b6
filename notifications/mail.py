"""Notification mails: one at once for what a player wants at once, the rest in a daily digest.

``notify`` marks a row ``pending`` when its recipient's address is verified.
``mails_send_pending`` claims pending rows in batches (``FOR UPDATE SKIP LOCKED``), so two
workers never decide one row twice, and decides each by the recipient's mode for its kind
and whether the address is still verified: a mail (``queued``), the digest (``digest``) or
nothing (``skipped``). It then sends the queued mails itself, through the SMTP server, and
marks a row ``sent`` only once the server accepted its mail. ``digests_send`` mails each
player's ``digest`` rows as one mail, likewise.

A mail the server did not take is tried again by the next runs (beat runs the task every
minute), after a wait that doubles from a minute up to an hour; a recipient refused for
good (5xx), or ``MAX_ATTEMPTS`` failed tries, make the row ``failed``, which moderators see
in the admin with the server's last answer and may send again. Nothing here goes through
the broker: a broker that is away when a notification is made delays its mail by at most a
minute and loses none. Every mail carries RFC 8058's ``List-Unsubscribe`` and
``List-Unsubscribe-Post`` headers and a visible link.
"""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from accounts.zones import zone_of
from core.mail import absolute_url, templated_message
from notifications import preferences
from notifications.models import DEFAULT_EMAIL_MODES, EmailMode, EmailStatus, Kind, Notification
from notifications.services import mailable
from notifications.texts import describe

logger = logging.getLogger(__name__)

BATCH = 200  # rows decided per transaction, and mails sent per claim
MAX_ATTEMPTS = 10  # failed tries before a mail is given up: about four hours of waits
RETRY_WAIT_MAX = timedelta(hours=1)
# How long a sweep holds the mails it claimed: a sweep that died mid-batch (a killed worker)
# leaves them to the next one after this. Longer than a batch takes with a server that answers.
CLAIM_SECONDS = 15 * 60
DIGEST_CAP = 50  # notifications listed in one digest; the rest are "and N more"
NOTIFICATION_TEMPLATE = "mail/notifications/notification"
DIGEST_TEMPLATE = "mail/notifications/digest"


def unsubscribe_url(user_id: int, scope: str) -> str:
    token = preferences.unsubscribe_token(user_id, scope)
    return absolute_url(reverse("notifications:unsubscribe", args=[token]))


def unsubscribe_headers(url: str) -> dict[str, str]:
    """RFC 8058: a mail client offers "Unsubscribe" and POSTs to ``url`` itself."""
    return {"List-Unsubscribe": f"<{url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}


def _why(kind: str, *, chosen: bool) -> str:
    label = Kind(kind).label
    if chosen:
        return f"You get this mail because you asked for mails about “{label}” at once."
    return f"You get this mail because mails about “{label}” come at once unless you choose otherwise."


def notification_mail(notification: Notification, user: User, *, chosen: bool) -> EmailMultiAlternatives:
    """The mail of one notification to ``user``, its times in ``user``'s zone (a deadline in its
    words is written when the mail is, like the page writes it when shown)."""
    with timezone.override(zone_of(user)):
        text = describe(notification)
        url = unsubscribe_url(user.pk, notification.kind)
        context = {
            "user": user,
            "title": text.title,
            "body": text.body,
            "link": absolute_url(text.url),
            "why": _why(notification.kind, chosen=chosen),
            "unsubscribe_url": url,
            "settings_url": absolute_url(reverse("notifications:preferences")),
        }
        return templated_message(
            to=[user.email], template=NOTIFICATION_TEMPLATE, context=context, headers=unsubscribe_headers(url)
        )


def digest_mail(user: User, rows: list[Notification], *, more: int) -> EmailMultiAlternatives:
    """One digest of ``rows`` (newest first) to ``user``, its times in ``user``'s zone."""
    url = unsubscribe_url(user.pk, preferences.DIGEST)
    with timezone.override(zone_of(user)):
        items = []
        for row in rows:
            text = describe(row)
            items.append({"title": text.title, "body": text.body, "link": absolute_url(text.url), "at": row.created_at})
        context = {
            "user": user,
            "items": items,
            "count": len(rows) + more,
            "more": more,
            "list_url": absolute_url(reverse("notifications:list")),
            "unsubscribe_url": url,
            "settings_url": absolute_url(reverse("notifications:preferences")),
        }
        return templated_message(
            to=[user.email], template=DIGEST_TEMPLATE, context=context, headers=unsubscribe_headers(url)
        )


def retry_wait(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th failed try: 1, 2, 4 … minutes, at most an hour."""
    return min(timedelta(minutes=2 ** (attempts - 1)), RETRY_WAIT_MAX)


def smtp_error(exc: Exception) -> str:
    """What the server (or the network) said, for a moderator: "550 no such user"."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        answers = [f"{code} {reply.decode(errors='replace')}" for code, reply in exc.recipients.values()]
        text = "; ".join(answers)
    elif isinstance(exc, smtplib.SMTPResponseException):
        reply = exc.smtp_error.decode(errors="replace") if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error)
        text = f"{exc.smtp_code} {reply}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text[:200]


def refused_for_good(exc: Exception) -> bool:
    """The server refused every recipient with a 5xx: the address is wrong, trying again will not help."""
    return isinstance(exc, smtplib.SMTPRecipientsRefused) and all(code >= 500 for code, _ in exc.recipients.values())


@dataclass
class MailRun:
    """What one run of ``mails_send_pending`` did, in rows."""

    sent: int = 0
    digest: int = 0
    skipped: int = 0
    retrying: int = 0
    failed: int = 0
    batches: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "sent": self.sent,
            "digest": self.digest,
            "skipped": self.skipped,
            "retrying": self.retrying,
            "failed": self.failed,
            "batches": self.batches,
        }


def _locked(rows: QuerySet[Notification]) -> QuerySet[Notification]:
    """Rows no other worker holds, locked until the transaction ends (the join-free lock)."""
    return rows.select_for_update(skip_locked=True, of=("self",))


def _decide_batch(run: MailRun, *, now: datetime, limit: int) -> bool:
    """Claim and decide one batch of pending rows; False when none was left."""
    with transaction.atomic():
        rows = list(_locked(Notification.objects.filter(email_status=EmailStatus.PENDING)).order_by("id")[:limit])
        if not rows:
            return False
        recipients = {row.recipient_id for row in rows}
        verified = mailable(recipients)
        chosen = preferences.stored_modes(recipients)
        decided: dict[str, list[int]] = {EmailStatus.QUEUED: [], EmailStatus.DIGEST: [], EmailStatus.SKIPPED: []}
        for row in rows:
            decided[_decide(row, verified, chosen)].append(row.pk)
        for status, ids in decided.items():
            if ids:
                retry_at = now if status == EmailStatus.QUEUED else None
                Notification.objects.filter(pk__in=ids).update(email_status=status, email_retry_at=retry_at)
    run.digest += len(decided[EmailStatus.DIGEST])
    run.skipped += len(decided[EmailStatus.SKIPPED])
    run.batches += 1
    return True


def _decide(row: Notification, verified: set[int], chosen: dict[int, dict[str, str]]) -> str:
    """The row's fate by its recipient's address and their mode for its kind."""
    if row.recipient_id not in verified:
        return EmailStatus.SKIPPED
    mode = chosen[row.recipient_id].get(row.kind) or DEFAULT_EMAIL_MODES.get(row.kind, EmailMode.OFF)
    if mode == EmailMode.INSTANT:
        return EmailStatus.QUEUED
    return EmailStatus.DIGEST if mode == EmailMode.DIGEST else EmailStatus.SKIPPED


def _claim(*, now: datetime, limit: int) -> list[Notification]:
    """Queued mails due now, held for ``CLAIM_SECONDS`` so no other run sends them meanwhile.

    The claim commits before any mail is sent: no row lock waits on the SMTP server, so a
    player marking notifications read never waits for a slow one.
    """
    with transaction.atomic():
        due = Notification.objects.filter(email_status=EmailStatus.QUEUED, email_retry_at__lte=now)
        rows = list(_locked(due).order_by("email_retry_at", "id")[:limit])
        Notification.objects.filter(pk__in=[row.pk for row in rows]).update(
            email_retry_at=now + timedelta(seconds=CLAIM_SECONDS)
        )
    return rows


def _mail_batch(run: MailRun, *, now: datetime, limit: int) -> bool:
    """Send one claimed batch of queued mails and record each outcome; False when none was due."""
    rows = _claim(now=now, limit=limit)
    if not rows:
        return False
    recipients = {row.recipient_id for row in rows}
    verified = mailable(recipients)  # an address changed since the row was queued gets no mail
    chosen = preferences.stored_modes(recipients)
    users = User.objects.in_bulk(verified)
    sent: list[int] = []
    skipped = [row.pk for row in rows if row.recipient_id not in verified]
    failures: dict[int, Exception] = {}
    away: Exception | None = None  # the server or the network failed: the rest wait with it
    connection = get_connection()
    try:
        connection.open()
    except (OSError, smtplib.SMTPException) as exc:
        away = exc
    try:
        for row in rows:
            if row.recipient_id not in verified:
                continue
            if away is not None:
                failures[row.pk] = away
                continue
            message = notification_mail(row, users[row.recipient_id], chosen=row.kind in chosen[row.recipient_id])
            message.connection = connection
            try:
                message.send()
            except (smtplib.SMTPRecipientsRefused, smtplib.SMTPDataError) as exc:
                failures[row.pk] = exc  # this mail only; the session goes on
            except (OSError, smtplib.SMTPException) as exc:
                failures[row.pk] = away = exc
            else:
                sent.append(row.pk)
    finally:
        connection.close()
    with transaction.atomic():
        Notification.objects.filter(pk__in=sent).update(
            email_status=EmailStatus.SENT, emailed_at=now, email_retry_at=None, email_error=""
        )
        Notification.objects.filter(pk__in=skipped).update(email_status=EmailStatus.SKIPPED, email_retry_at=None)
        attempts = {row.pk: row.email_attempts + 1 for row in rows}
        for pk, error in failures.items():
            if _failed(pk, error, attempts=attempts[pk], now=now):
                run.failed += 1
            else:
                run.retrying += 1
    if away is not None:
        logger.warning("notification mails: the mail server is unavailable (%s)", smtp_error(away))
    run.sent += len(sent)
    run.skipped += len(skipped)
    return away is None


def _failed(pk: int, exc: Exception, *, attempts: int, now: datetime, status: str = EmailStatus.QUEUED) -> bool:
    """Record a failed try of row ``pk``; True when the mail is given up (``failed``)."""
    given_up = refused_for_good(exc) or attempts >= MAX_ATTEMPTS
    Notification.objects.filter(pk=pk).update(
        email_status=EmailStatus.FAILED if given_up else status,
        email_attempts=attempts,
        email_retry_at=None if given_up else now + retry_wait(attempts),
        email_error=smtp_error(exc),
    )
    return given_up


def mails_send_pending(*, now: datetime | None = None, batch: int = BATCH, max_batches: int = 50) -> MailRun:
    """Decide every pending row, a batch per transaction, then send the mails due; a few cheap
    queries when nothing is to do.

    ``max_batches`` bounds one run (10,000 rows by default); the next run, a minute later
    from beat or at the next kick, goes on where this one stopped. A server that fails a
    whole batch ends the run: the rest of the mails wait for the next one.
    """
    now = now or timezone.now()
    run = MailRun()
    while run.batches < max_batches and _decide_batch(run, now=now, limit=batch):
        pass
    sends = 0
    while sends < max_batches and _mail_batch(run, now=now, limit=batch):
        sends += 1
    digests_send(now=now, retrying=True)
    return run


def mails_retry(*, ids: Iterable[int], now: datetime | None = None) -> int:
    """Queue the failed mails among ``ids`` again, with a fresh count of tries (a moderator's action)."""
    return Notification.objects.filter(pk__in=list(ids), email_status=EmailStatus.FAILED).update(
        email_status=EmailStatus.QUEUED, email_attempts=0, email_retry_at=now or timezone.now()
    )


def _digest_one(user_id: int, *, now: datetime, cap: int) -> int:
    """Mail one user's digest rows as one mail; returns how many rows it listed (0 when it failed)."""
    with transaction.atomic():
        # The recipient's row is the digest's lock: rows locked one by one with SKIP LOCKED
        # could be split between two runs, each mailing part of one player's digest.
        # FOR NO KEY UPDATE leaves new notifications for the player free to be inserted.
        claimed = User.objects.select_for_update(skip_locked=True, no_key=True).filter(pk=user_id)
        if not claimed.values_list("pk", flat=True):
            return 0  # another run is mailing this player's digest now
        rows = Notification.objects.filter(recipient_id=user_id, email_status=EmailStatus.DIGEST)
        held = list(rows.select_for_update(of=("self",)).order_by("-created_at", "-id"))
        if not held:
            return 0  # another run holds them, or sent them already
        modes = preferences.modes_for([user_id])[user_id]
        # A kind turned off since its rows were kept for the digest is not sent.
        wanted = [row for row in held if modes.get(row.kind) != EmailMode.OFF]
        if not wanted or user_id not in mailable([user_id]):
            wanted = []
        else:
            message = digest_mail(User.objects.get(pk=user_id), wanted[:cap], more=max(0, len(wanted) - cap))
            try:
                # Sent with the rows held: the one player's rows wait at most one mail's time.
                message.send()
            except (OSError, smtplib.SMTPException) as exc:
                for row in wanted:
                    _failed(row.pk, exc, attempts=row.email_attempts + 1, now=now, status=EmailStatus.DIGEST)
                logger.warning("digest to user %s not sent: %s", user_id, smtp_error(exc))
                return 0
        sent = [row.pk for row in wanted]
        Notification.objects.filter(pk__in=sent).update(
            email_status=EmailStatus.SENT, emailed_at=now, email_retry_at=None, email_error=""
        )
        skipped = [row.pk for row in held if row.pk not in set(sent)]
        Notification.objects.filter(pk__in=skipped).update(email_status=EmailStatus.SKIPPED)
        return len(sent)


def digests_send(*, now: datetime | None = None, cap: int = DIGEST_CAP, retrying: bool = False) -> tuple[int, int]:
    """Mail every player with ``digest`` rows one digest; returns ``(mails, rows)``.

    Each player is their own transaction, so a second run at the same time or later finds
    their rows sent or locked and mails nobody twice. ``retrying`` (the every-minute mail
    run) mails only the players whose last digest failed and whose wait is over.
    """
    now = now or timezone.now()
    due = Notification.objects.filter(email_status=EmailStatus.DIGEST)
    if retrying:
        due = due.filter(email_retry_at__lte=now)
    user_ids = list(due.order_by("recipient_id").values_list("recipient_id", flat=True).distinct())
    mails = rows = 0
    for user_id in user_ids:
        listed = _digest_one(user_id, now=now, cap=cap)
        mails += 1 if listed else 0
        rows += listed
    return mails, rows
