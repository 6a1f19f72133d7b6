"""The request type of pages only a signed-in user reaches.

A view behind ``login_required``, or an admin action (the admin lets in active staff only),
annotates ``request: AuthenticatedHttpRequest``: its ``user`` is an account, never
``AnonymousUser``, so the services that take a ``User`` get one without a check or a cast.
Where Django fixes the signature (a ``ModelAdmin`` method it calls), ``signed_in_user``
says the same with a check.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from accounts.models import User
from core.http import HtmxHttpRequest


class AuthenticatedHttpRequest(HtmxHttpRequest):
    user: User


def signed_in_user(request: HttpRequest) -> User:
    """The account behind a request that only signed-in users reach; 403 for anyone else."""
    user = request.user
    if not isinstance(user, User):
        raise PermissionDenied
    return user
