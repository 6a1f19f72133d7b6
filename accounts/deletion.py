"""Deleting an account (docs/security.md, "Deleting an account"): pseudonymised, not removed.

``account_delete`` replaces the username by a new one nothing links to ("deleted-" and ten
random hexadecimal digits), removes the email address, profile text, password, roles,
sessions, sign-in prints and linked accounts (Discord, Lichess), and turns the account off, which takes it off every
leaderboard at once. The other apps remove what they keep for the account through
``account_deleted`` (API tokens, notifications and mail settings, searches and parties).
Its matches and rating history stay: they are the other players' history too, and every
ladder's replay must still give its ratings bit for bit. A mail to the verified address it
had confirms the deletion.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import LinkedIdentity, SignInPrint, User
from accounts.sessions import sessions_end
from accounts.signals import account_deleted
from audit.models import Action
from audit.services import audit_record
from core.mail import send_templated_mail

DELETED_PREFIX = "deleted-"
ALREADY_DELETED = "This account is deleted already."
REASON_REQUIRED = "Say why the account is deleted: the owner gets it by mail, and the audit trail keeps it."
OWN_STAFF = "A staff account is deleted by another administrator, after its roles are taken away."


def account_delete(*, user: User, by: User, reason: str = "", now: datetime) -> str:
    """Pseudonymise ``user`` (see the module's doc), by its owner or by a moderator with a
    ``reason``; returns the new username. Everything happens in one transaction."""
    by_moderator = by.pk != user.pk
    reason = reason.strip()
    if by_moderator and not reason:
        raise ValidationError({"reason": REASON_REQUIRED}, code="reason_required")
    with transaction.atomic():
        user = User.objects.select_for_update().get(pk=user.pk)
        if user.username.startswith(DELETED_PREFIX) and not user.is_active and not user.has_usable_password():
            raise ValidationError(ALREADY_DELETED, code="already_deleted")
        if not by_moderator and (user.is_staff or user.is_superuser):
            raise ValidationError(OWN_STAFF, code="staff")
        old_name, address = user.username, user.email if user.has_verified_email else ""
        account_deleted.send(sender=User, user=user, now=now)
        sessions_end(user=user)
        SignInPrint.objects.filter(user=user).delete()
        LinkedIdentity.objects.filter(user=user).delete()  # Discord or Lichess no longer signs in to it
        user.username = _free_name()
        user.email = user.email_verified = user.about = user.first_name = user.last_name = ""
        user.set_unusable_password()
        user.is_active = user.is_staff = user.is_superuser = False
        user.save()
        user.groups.clear()
        user.user_permissions.clear()
        if by_moderator:
            audit_record(actor=by, action=Action.ACCOUNT_DELETE, subject=user, reason=reason, at=now)
        if address:
            context = {"username": old_name, "new_name": user.username, "by_moderator": by_moderator, "reason": reason}
            send_templated_mail(to=[address], template="mail/account_deleted", context=context)
    return user.username


def _free_name() -> str:
    while True:
        name = f"{DELETED_PREFIX}{secrets.token_hex(5)}"
        if not User.objects.filter(username__iexact=name).exists():
            return name
