"""``Authorization: Token <secret>`` or ``Bearer <secret>`` against hashed API tokens."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from accounts.models import User
from api.models import ApiToken
from api.services import token_hash
from api.store import live_token

KEYWORDS = (b"token", b"bearer")
TOUCH_EVERY = timedelta(minutes=1)
INVALID_TOKEN = "Invalid or revoked token."
MALFORMED_HEADER = "Malformed Authorization header: use “Token <secret>” or “Bearer <secret>”."


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """Reads the token row on every request, so a revoked token fails at once.

    ``last_used_at`` is written at most once a minute, with a conditional update.
    """

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(MALFORMED_HEADER)
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(MALFORMED_HEADER) from None
        token = live_token(token_hash(secret))
        if token is None:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at >= TOUCH_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Token realm="api"'


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token from your account page: `Authorization: Bearer <token>` "
            "(or `Token <token>`).",
        }
