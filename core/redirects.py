"""Where a form's ``next`` field may send the reader back to: a path on this site, or nowhere.

``url_has_allowed_host_and_scheme`` accepts a bare word such as ``foo`` (a relative
address), which ``django.shortcuts.redirect`` would then take for a view name and fail to
reverse. A form on this site always sends an absolute path, so anything else is ignored.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def safe_next(request: HttpRequest, value: str | None) -> str:
    """``value`` if it is a path on this site (``/…``, no other host or scheme), else ""."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")):
        return ""
    allowed = url_has_allowed_host_and_scheme(
        value, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return value if allowed else ""
