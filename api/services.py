"""Writes for API tokens: create (the secret is returned once) and revoke."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from django.core.exceptions import ValidationError
from django.utils import timezone

from accounts.models import User
from api.models import ApiToken

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
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now)
    token.refresh_from_db()
    return token
