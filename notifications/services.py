"""Writing and reading notifications: the one way any service tells someone something.

``notify`` runs inside the caller's transaction; what must happen after the commit (the
mail task, forgetting the cached counts) is registered with ``transaction.on_commit``, so
a rolled-back event tells nobody.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.utils import timezone

from accounts.models import User
from notifications import store
from notifications.models import EmailPreference, EmailStatus, Kind, Notification

COUNTS_KEY = "notifications:counts:%d"  # the header's counts for one user (see ``cached_counts``)
COUNTS_TIMEOUT = 3600


def mailable(user_ids: Iterable[int]) -> set[int]:
    """The users among ``user_ids`` whose address is verified: the only ones sent notification mails."""
    return recipients_of(user_ids).with_mail


@dataclass(frozen=True, slots=True)
class Recipients:
    """Who is told, read once: each user's name (for the words) and who gets mail (for ``notify``)."""

    names: dict[int, str]
    with_mail: set[int]


def recipients_of(user_ids: Iterable[int]) -> Recipients:
    """The names of ``user_ids`` and which of them get mail (active, with an address they verified,
    in any case), in one query: on PostgreSQL one prepared on the connection (every formed game
    and rated match asks), elsewhere its ORM twin (``notifications.store.recipient_rows``)."""
    rows = store.recipient_rows(user_ids)
    names, with_mail = {}, set()
    for pk, username, mail in rows:
        names[pk] = username
        if mail:
            with_mail.add(pk)
    return Recipients(names, with_mail)


def notify(
    kind: Kind | str,
    recipient_ids: Iterable[int],
    *,
    key: str,
    ladder_id: int | None = None,
    match_id: int | None = None,
    data: Mapping[str, Any] | None = None,
    data_for: Mapping[int, Mapping[str, Any]] | None = None,
    now: datetime | None = None,
    with_mail: set[int] | None = None,
) -> int:
    """Tell each recipient once that ``kind`` happened about ``key`` ("match:12").

    ``data`` is what the text needs, the same for everyone; ``data_for`` adds to it per
    recipient (their rating change). A recipient already told of this ``(kind, key)`` is
    skipped: ``(recipient, kind, key)`` is unique. ``with_mail``: those of them ``mailable``
    gives, where the caller has read them already (``recipients_of``). Returns how many
    recipients were asked.
    """
    recipients = list(dict.fromkeys(recipient_ids))
    if not recipients:
        return 0
    now = now or timezone.now()
    if with_mail is None:
        with_mail = mailable(recipients)
    rows = [
        Notification(
            recipient_id=recipient,
            kind=kind,
            key=key,
            ladder_id=ladder_id,
            match_id=match_id,
            data={**(data or {}), **((data_for or {}).get(recipient, {}))},
            created_at=now,
            email_status=EmailStatus.PENDING if recipient in with_mail else EmailStatus.NONE,
        )
        for recipient in recipients
    ]
    store.notifications_insert(rows)
    forget_counts(recipients)
    if with_mail:
        mail_soon()
    return len(recipients)


def mail_soon() -> None:
    """After the commit, start the task that mails pending notifications.

    ``robust``: should the broker be down, the event stays committed and its request
    succeeds; the failure is logged and the task's beat run, every minute, mails the rows.
    """
    from notifications.tasks import send_notification_mails_task

    transaction.on_commit(send_notification_mails_task.delay, robust=True)


def forget_counts(user_ids: Iterable[int]) -> None:
    """After the commit, drop the cached header counts of these users (they changed)."""
    keys = [COUNTS_KEY % pk for pk in set(user_ids)]
    if keys:
        transaction.on_commit(lambda: cache.delete_many(keys))


def unread_count(user_id: int) -> int:
    return Notification.objects.filter(recipient_id=user_id, read_at__isnull=True).count()


def for_user(user: User, *, kinds: Iterable[str] = (), unread_first: bool = False) -> QuerySet[Notification]:
    """A user's notifications, newest first (unread ones first with ``unread_first``)."""
    rows = Notification.objects.filter(recipient=user).select_related("ladder", "match")
    kinds = list(kinds)
    if kinds:
        rows = rows.filter(kind__in=kinds)
    if unread_first:
        # Unread, then read; newest first in each (ordering by read_at would sort the read ones by when).
        read = ExpressionWrapper(Q(read_at__isnull=False), output_field=BooleanField())
        return rows.order_by(read.asc(), "-created_at", "-id")
    return rows.order_by("-created_at", "-id")


def mark_read(user: User, *, ids: Iterable[int] | None = None, now: datetime | None = None) -> int:
    """Mark the user's notifications ``ids`` read (all of them when ``ids`` is None); returns how many changed.

    Ids of someone else's notifications are ignored, never an error: they reveal nothing.
    """
    now = now or timezone.now()
    rows = Notification.objects.filter(recipient=user, read_at__isnull=True)
    if ids is not None:
        rows = rows.filter(pk__in=list(ids))
    with transaction.atomic():
        changed = rows.update(read_at=now)
        if changed:
            forget_counts([user.pk])
    return changed


def on_account_deleted(*, user: Any, **kwargs: Any) -> None:
    """Receiver of ``accounts.signals.account_deleted``: the account's notifications and mail settings go."""
    Notification.objects.filter(recipient=user).delete()
    EmailPreference.objects.filter(user=user).delete()
