"""Notification mails: one at once for what a player wants at once, the rest in a daily digest.

``notify`` marks a row ``pending`` when its recipient's address is verified.
``mails_send_pending`` claims pending rows in batches (``FOR UPDATE SKIP LOCKED``), so two
workers never mail one row twice, and decides each by the recipient's mode for its kind
and whether the address is still verified: a mail (``sent``), the digest (``digest``) or
nothing (``skipped``). ``digests_send`` mails each player's ``digest`` rows as one mail.

Mails are enqueued by ``core.mail`` on commit of the claim, so a rolled-back claim sends
nothing and leaves its rows pending for the next run. Every mail carries RFC 8058's
``List-Unsubscribe`` and ``List-Unsubscribe-Post`` headers and a visible link.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from core.mail import absolute_url, send_templated_mail
from notifications import preferences
from notifications.models import DEFAULT_EMAIL_MODES, EmailMode, EmailStatus, Kind, Notification
from notifications.services import mailable
from notifications.texts import describe

BATCH = 200  # rows claimed per transaction: one batch's mails are enqueued at its commit
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


def notification_mail(notification: Notification, user: User, *, chosen: bool) -> None:
    """Enqueue the mail of one notification to ``user`` (on commit)."""
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
    send_templated_mail(
        to=[user.email], template=NOTIFICATION_TEMPLATE, context=context, headers=unsubscribe_headers(url)
    )


def digest_mail(user: User, rows: list[Notification], *, more: int) -> None:
    """Enqueue one digest of ``rows`` (newest first) to ``user`` (on commit)."""
    url = unsubscribe_url(user.pk, preferences.DIGEST)
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
    send_templated_mail(to=[user.email], template=DIGEST_TEMPLATE, context=context, headers=unsubscribe_headers(url))


@dataclass
class MailRun:
    """What one run of ``mails_send_pending`` did, in rows."""

    sent: int = 0
    digest: int = 0
    skipped: int = 0
    batches: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"sent": self.sent, "digest": self.digest, "skipped": self.skipped, "batches": self.batches}


def _locked(rows: QuerySet[Notification]) -> QuerySet[Notification]:
    """Rows no other worker holds, locked until the transaction ends (the join-free lock)."""
    return rows.select_for_update(skip_locked=True, of=("self",))


def _decide(row: Notification, verified: set[int], chosen: dict[int, dict[str, str]]) -> str:
    """The row's fate by its recipient's address and their mode for its kind."""
    if row.recipient_id not in verified:
        return EmailStatus.SKIPPED
    mode = chosen[row.recipient_id].get(row.kind) or DEFAULT_EMAIL_MODES.get(row.kind, EmailMode.OFF)
    if mode == EmailMode.INSTANT:
        return EmailStatus.SENT
    return EmailStatus.DIGEST if mode == EmailMode.DIGEST else EmailStatus.SKIPPED


def _send_batch(run: MailRun, *, now: datetime, limit: int) -> bool:
    """Claim and decide one batch of pending rows; False when none was left."""
    with transaction.atomic():
        rows = list(_locked(Notification.objects.filter(email_status=EmailStatus.PENDING)).order_by("id")[:limit])
        if not rows:
            return False
        recipients = {row.recipient_id for row in rows}
        verified = mailable(recipients)
        chosen = preferences.stored_modes(recipients)
        users = User.objects.in_bulk(verified)
        decided: dict[str, list[int]] = {EmailStatus.SENT: [], EmailStatus.DIGEST: [], EmailStatus.SKIPPED: []}
        for row in rows:
            status = _decide(row, verified, chosen)
            if status == EmailStatus.SENT:
                notification_mail(row, users[row.recipient_id], chosen=row.kind in chosen[row.recipient_id])
            decided[status].append(row.pk)
        for status, ids in decided.items():
            if ids:
                emailed = now if status == EmailStatus.SENT else None
                Notification.objects.filter(pk__in=ids).update(email_status=status, emailed_at=emailed)
    run.sent += len(decided[EmailStatus.SENT])
    run.digest += len(decided[EmailStatus.DIGEST])
    run.skipped += len(decided[EmailStatus.SKIPPED])
    run.batches += 1
    return True


def mails_send_pending(*, now: datetime | None = None, batch: int = BATCH, max_batches: int = 50) -> MailRun:
    """Decide every pending row, a batch per transaction; one cheap query when none is pending.

    ``max_batches`` bounds one run (10,000 rows by default); the next run, a minute later
    from beat or at the next kick, goes on where this one stopped.
    """
    now = now or timezone.now()
    run = MailRun()
    while run.batches < max_batches and _send_batch(run, now=now, limit=batch):
        pass
    return run


def _digest_one(user_id: int, *, now: datetime, cap: int) -> int:
    """Mail one user's digest rows as one mail; returns how many rows it listed."""
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
            digest_mail(User.objects.get(pk=user_id), wanted[:cap], more=max(0, len(wanted) - cap))
        sent = [row.pk for row in wanted]
        Notification.objects.filter(pk__in=sent).update(email_status=EmailStatus.SENT, emailed_at=now)
        skipped = [row.pk for row in held if row.pk not in set(sent)]
        Notification.objects.filter(pk__in=skipped).update(email_status=EmailStatus.SKIPPED)
        return len(sent)


def digests_send(*, now: datetime | None = None, cap: int = DIGEST_CAP) -> tuple[int, int]:
    """Mail every player with ``digest`` rows one digest; returns ``(mails, rows)``.

    Each player is their own transaction, so a second run at the same time or later finds
    their rows sent or locked and mails nobody twice.
    """
    now = now or timezone.now()
    user_ids = list(
        Notification.objects.filter(email_status=EmailStatus.DIGEST)
        .order_by("recipient_id")
        .values_list("recipient_id", flat=True)
        .distinct()
    )
    mails = rows = 0
    for user_id in user_ids:
        listed = _digest_one(user_id, now=now, cap=cap)
        mails += 1 if listed else 0
        rows += listed
    return mails, rows
