"""Glue for django-axes, which throttles repeated failed logins."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest


def axes_username(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """Count failures per account whatever the case typed, as logins are case-insensitive."""
    source = credentials if credentials else request.POST
    username = source.get("username")
    return username.strip().lower() if isinstance(username, str) else None
