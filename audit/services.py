"""Writing and sweeping the audit trail: ``audit_records`` (and ``audit_record``, one entry) is the
only writer of ``AuditEntry``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db.models import QuerySet
from django.utils import timezone

from audit.models import Action, AuditEntry

_ADMIN_ACTIONS = {ADDITION: Action.ADMIN_ADD, CHANGE: Action.ADMIN_CHANGE, DELETION: Action.ADMIN_DELETE}


@dataclass(frozen=True)
class Record:
    """One entry to write: ``actor`` did ``action`` about ``subject``.

    ``actor`` and ``subject`` are users or their ids (None: the site itself; nobody). Their
    names are kept beside the links, so the entry still reads after an account is gone.
    """

    actor: Any
    action: Action
    subject: Any = None
    ladder: Any = None
    ladder_id: int | None = None
    target: str = ""
    reason: str = ""
    data: dict[str, Any] | None = None
    at: datetime | None = None


def audit_record(
    *,
    actor: Any,
    action: Action,
    subject: Any = None,
    ladder: Any = None,
    ladder_id: int | None = None,
    target: str = "",
    reason: str = "",
    data: dict[str, Any] | None = None,
    at: datetime | None = None,
) -> AuditEntry:
    """Record that ``actor`` did ``action`` about ``subject``; inside the caller's transaction
    (``Record`` says what each argument is)."""
    record = Record(actor, action, subject, ladder, ladder_id, target, reason, data, at)
    return audit_records([record])[0]


def audit_records(records: Sequence[Record]) -> list[AuditEntry]:
    """Write ``records`` in one statement, with one more to read the names of the accounts
    given by id (none when every account is given as a user)."""
    ids = {who for record in records for who in (record.actor, record.subject) if isinstance(who, int)}
    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username")) if ids else {}
    now = timezone.now()
    entries = []
    for record in records:
        actor_id, actor_name = _who(record.actor, names)
        subject_id, subject_name = _who(record.subject, names)
        entries.append(
            AuditEntry(
                at=record.at or now,
                actor_id=actor_id,
                actor_name=actor_name or "the site",
                action=record.action,
                subject_id=subject_id,
                subject_name=subject_name,
                ladder_id=record.ladder.pk if record.ladder is not None else record.ladder_id,
                target=record.target[:200],
                reason=record.reason.strip(),
                data=record.data or {},
            )
        )
    return AuditEntry.objects.bulk_create(entries) if entries else []


def _who(user: Any, names: dict[int, str]) -> tuple[int | None, str]:
    if user is None:
        return None, ""
    if isinstance(user, int):
        return (user, names[user]) if user in names else (None, "")
    return user.pk, user.get_username()


def log_entries_record(entries: LogEntry | Iterable[LogEntry]) -> int:
    """Copy admin log entries into the trail, each once (the receiver of ``LogEntry``'s saves and
    the bulk paths that bypass it both call this; ``log_actions`` gives one entry or a list).
    Returns how many were new. A fixed number of statements, however many entries."""
    listed = [entries] if isinstance(entries, LogEntry) else list(entries)
    entries = [entry for entry in listed if entry.pk is not None]
    if not entries:
        return 0
    done = set(
        AuditEntry.objects.filter(data__log_entry__in=[entry.pk for entry in entries]).values_list(
            "data__log_entry", flat=True
        )
    )
    entries = [entry for entry in entries if entry.pk not in done]
    users = get_user_model()
    models = {
        entry.content_type_id: ContentType.objects.get_for_id(entry.content_type_id).model_class()
        for entry in entries
        if entry.content_type_id
    }
    # Actors and the accounts acted on, as ids: audit_records reads all their names at once.
    records = []
    for entry in entries:
        model = models.get(entry.content_type_id) if entry.content_type_id else None
        subject = None
        if model is users and str(entry.object_id).isdigit():
            subject = int(entry.object_id)
        ladder_id = None
        if model is not None and model._meta.label == "ladder.Ladder" and entry.action_flag != DELETION:
            ladder_id = int(entry.object_id) if str(entry.object_id).isdigit() else None
        name = str(model._meta.verbose_name).capitalize() if model is not None else "Object"
        records.append(
            Record(
                actor=entry.user_id,
                action=_ADMIN_ACTIONS.get(entry.action_flag, Action.ADMIN_CHANGE),
                subject=subject,
                target=f"{name}: {entry.object_repr}",
                reason=entry.get_change_message(),
                data={
                    "log_entry": entry.pk,
                    "model": model._meta.label if model is not None else "",
                    "object_id": str(entry.object_id),
                },
                at=entry.action_time,
                ladder_id=ladder_id,
            )
        )
    return len(audit_records(records))


def audit_sweep(*, now: datetime | None = None) -> int:
    """Delete entries older than ``AUDIT_KEEP_DAYS``; returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.AUDIT_KEEP_DAYS)
    deleted, _ = AuditEntry.objects.filter(at__lt=cutoff).delete()
    return deleted


def audit_entries(
    *, action: str = "", actor: str = "", subject: str = "", ladder_id: int | None = None
) -> QuerySet[AuditEntry]:
    """The trail, newest first, narrowed by action, actor's or subject's name (exact, any case) and ladder."""
    entries = AuditEntry.objects.select_related("ladder")
    if action:
        entries = entries.filter(action=action)
    if actor:
        entries = entries.filter(actor_name__iexact=actor)
    if subject:
        entries = entries.filter(subject_name__iexact=subject)
    if ladder_id is not None:
        entries = entries.filter(ladder_id=ladder_id)
    return entries.order_by("-at", "-id")
