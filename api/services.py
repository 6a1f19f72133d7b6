"""Writes for API tokens: create (the secret is returned once), revoke one, and revoke every
token of an account whose password was set anew."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from accounts.signals import PasswordSetBy
from accounts.zones import zone_of
from api.models import ApiToken, IdempotencyKey, RevokedBy
from core.mail import absolute_url, send_templated_mail

TOKENS_REVOKED_TEMPLATE = "mail/tokens_revoked"
TOKEN_PREFIX = "lad_"
MAX_LIVE_TOKENS = 20
NAME_REQUIRED = "Give the token a name, so you know later what it is for."
TOO_MANY_TOKENS = "You have %(most)d live tokens; revoke one before creating another."
NOT_YOUR_TOKEN = "No such token."


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(*, user: User, name: str, read_only: bool = False) -> tuple[ApiToken, str]:
    """A new token for ``user`` and its secret, which is stored only as a hash."""
    name = name.strip()
    if not name:
        raise ValidationError(NAME_REQUIRED, code="name_required")
    if ApiToken.objects.live().filter(user=user).count() >= MAX_LIVE_TOKENS:
        raise ValidationError(TOO_MANY_TOKENS, code="too_many_tokens", params={"most": MAX_LIVE_TOKENS})
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name[:80],
        prefix=secret[: len(TOKEN_PREFIX) + 6],
        key_hash=token_hash(secret),
        read_only=read_only,
    )
    return token, secret


def token_revoke(*, user: User, token_id: int, now: datetime | None = None) -> ApiToken:
    """Revoke one of ``user``'s tokens; the next request with it is refused."""
    now = now or timezone.now()
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise ValidationError(NOT_YOUR_TOKEN, code="not_found")
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now, revoked_by=RevokedBy.OWNER)
    token.refresh_from_db()
    return token


def tokens_revoke_for_password(*, user: User, how: PasswordSetBy, now: datetime | None = None) -> list[ApiToken]:
    """Revoke every live token of ``user``, whose password was just set anew, and mail them the list.

    The live tokens are locked first, so a token its owner revokes at the same moment is
    neither revoked twice nor listed. The mail goes to a verified address only (a reset from
    the mailed link has just verified it); the token page shows each token as revoked, and
    why, either way.
    """
    now = now or timezone.now()
    revoked_by = RevokedBy.PASSWORD_RESET if how == PasswordSetBy.RESET else RevokedBy.PASSWORD_CHANGE
    with transaction.atomic():
        tokens = list(ApiToken.objects.live().filter(user=user).select_for_update().order_by("created_at", "pk"))
        if not tokens:
            return []
        ApiToken.objects.filter(pk__in=[token.pk for token in tokens]).update(revoked_at=now, revoked_by=revoked_by)
    for token in tokens:
        token.revoked_at, token.revoked_by = now, revoked_by
    if user.has_verified_email:
        context = {
            "user": user,
            "tokens": tokens,
            "how": PasswordSetBy(how).label,
            "tokens_url": absolute_url(reverse("api_tokens")),
            "reset_url": absolute_url(reverse("accounts:password_reset")),
        }
        with timezone.override(zone_of(user)):  # the tokens' dates in the owner's zone
            send_templated_mail(to=[user.email], template=TOKENS_REVOKED_TEMPLATE, context=context)
    return tokens


def on_password_set(*, user: User, how: PasswordSetBy, **kwargs: Any) -> None:
    """Receiver of ``accounts.signals.password_set`` (connected in ``ApiConfig.ready``)."""
    tokens_revoke_for_password(user=user, how=how)


def on_account_deleted(*, user: User, **kwargs: Any) -> None:
    """Receiver of ``accounts.signals.account_deleted``: the account's tokens and the answers kept
    for its retried reports go (a deleted account keeps no secret, even a hashed one)."""
    ApiToken.objects.filter(user=user).delete()
    IdempotencyKey.objects.filter(user=user).delete()
