"""``Authorization: Token <secret>`` or ``Bearer <secret>`` against hashed API tokens."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import auth
from django.contrib.auth.backends import ModelBackend
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from accounts.models import User
from api import sql
from api.models import ApiToken
from api.services import token_hash
from core import db

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


def live_token(key_hash: str) -> ApiToken | None:
    """The live token of an active user with this hash, its ``user`` loaded; else ``None``.

    On PostgreSQL it is one prepared statement that also reads the user's permissions (their
    own and their groups') into the cache ``ModelBackend`` keeps on the user, so the
    permission checks of the request (moderator, trusted reporter) need no query of their
    own. Other backends are asked as usual; and with a ``ModelBackend`` subclass that
    changes how permissions are found, the cache is left for it to fill.
    """
    if not db.on_postgresql():
        return ApiToken.objects.live().select_related("user").filter(key_hash=key_hash, user__is_active=True).first()
    with db.prepared_cursor() as cursor:
        cursor.execute(sql.LIVE_TOKEN, [key_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(sql.TOKEN_FIELDS)
    token = db.instance(ApiToken, sql.TOKEN_FIELDS, row[:split])
    token.user = db.instance(User, sql.USER_FIELDS, row[split : split + len(sql.USER_FIELDS)])
    if not token.user.is_superuser and _stock_model_backends():  # a superuser's are all of them
        token.user._perm_cache = set(row[-1])
    return token


def _stock_model_backends() -> bool:
    """Whether every ``ModelBackend`` configured keeps its own permission logic, so the
    statement's permissions are what it would find. (Other backends never read its cache.)"""
    return all(
        getattr(type(backend), name) is getattr(ModelBackend, name)
        for backend in auth.get_backends()
        if isinstance(backend, ModelBackend)
        for name in _PERMISSION_METHODS
    )


_PERMISSION_METHODS = (
    "has_perm",
    "get_all_permissions",
    "get_user_permissions",
    "get_group_permissions",
    "_get_permissions",
    "_get_user_permissions",
    "_get_group_permissions",
)


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
