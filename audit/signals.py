"""The trail's receivers: the admin's own log as it is written, and staff sign-ins."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_save
from django.dispatch import receiver

from audit.models import Action
from audit.services import audit_record, log_entries_record


@receiver(post_save, sender=LogEntry, dispatch_uid="audit_log_entry")
def _log_entry_saved(sender: type[LogEntry], instance: LogEntry, created: bool, **kwargs: Any) -> None:
    if created:
        log_entries_record([instance])


@receiver(user_logged_in, dispatch_uid="audit_staff_sign_in")
def _staff_signed_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if user.is_staff or user.is_superuser:
        path = getattr(request, "path", "") if request is not None else ""
        audit_record(actor=user, action=Action.STAFF_SIGN_IN, target=path, data={"admin": path.startswith("/admin/")})
