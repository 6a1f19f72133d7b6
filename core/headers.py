"""Response headers every answer carries: the Content-Security-Policy, Permissions-Policy,
and the cache rules of API answers that depend on who asked.

The site's pages run only scripts and styles it serves itself (no inline script, style or
``on…`` attribute anywhere; htmx's own indicator ``<style>`` is turned off by the
``htmx-config`` meta tag in ``base.html``), so the policy in ``CONTENT_SECURITY_POLICY``
allows ``'self'`` and nothing inline. Two kinds of answer set their own, looser policy:
the interactive API docs (``api/docs.py``, whose UIs need inline start-up code and web
workers) and a server error, whose page (``templates/500.html``) carries its style inline
so that it shows even when static files do not.
"""

from __future__ import annotations

from collections.abc import Callable

from csp.constants import UNSAFE_INLINE
from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import patch_cache_control, patch_vary_headers

API_PREFIX = "/api/"


class SiteCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, allowing the inline style of the server-error page."""

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if response.status_code >= 500 and parts.update is None:
            parts.update = {"style-src": [UNSAFE_INLINE]}
        return parts


class SiteHeadersMiddleware:
    """``Permissions-Policy`` on every answer; ``Vary: Authorization`` on the API's, and
    ``Cache-Control: private`` on those given to a token or a signed-in session.

    An API answer to a token holder (or a session) is theirs alone: a shared cache between
    the bot and the site must neither keep it nor hand it to the next caller. Anonymous
    reads stay cacheable, but vary on ``Authorization`` so that a cache never serves one
    to a token holder or the other way round.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        response.headers.setdefault("Permissions-Policy", settings.PERMISSIONS_POLICY)
        if request.path_info.startswith(API_PREFIX):
            patch_vary_headers(response, ["Authorization"])
            if _authenticated(request):
                patch_cache_control(response, private=True)
        return response


def _authenticated(request: HttpRequest) -> bool:
    """Whether the API answered a token or a session: DRF copies both to Django's request."""
    if getattr(request, "auth", None) is not None:
        return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)
