"""Who may do what through the API, beyond the services' own rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import permissions
from rest_framework.request import Request

from accounts.roles import is_moderator
from api.models import ApiToken

if TYPE_CHECKING:
    from rest_framework.views import APIView

READ_ONLY_TOKEN = "This token is read-only; create a token with write access to do this."
MODERATORS_ONLY = "Only moderators can do this."


class TokenScope(permissions.BasePermission):
    """Reads for anyone; writes need a signed-in user, and not through a read-only token."""

    message = READ_ONLY_TOKEN
    code = "read_only_token"

    def has_permission(self, request: Request, view: APIView) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        if not (request.user and request.user.is_authenticated):
            return False
        return not (isinstance(request.auth, ApiToken) and request.auth.read_only)


class IsModerator(permissions.BasePermission):
    """A signed-in moderator (``accounts.roles.is_moderator``)."""

    message = MODERATORS_ONLY
    code = "not_moderator"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and request.user.is_authenticated and is_moderator(request.user))
