"""Rate limits per token (or signed-in session) and per anonymous address.

Rates come from ``settings.API_THROTTLE_RATES`` at each request (not at import), so a
deployment or a test can change them. Each answer over the limit is a 429 with
``Retry-After``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from api.models import ApiToken

if TYPE_CHECKING:
    from rest_framework.views import APIView


class ApiRateThrottle(SimpleRateThrottle):
    """``token`` scope per token, ``user`` per session user, ``anon`` per client address."""

    scope = "api"

    def get_rate(self) -> str | None:
        return None  # chosen per request in allow_request

    def allow_request(self, request: Request, view: APIView) -> bool:
        rates = settings.API_THROTTLE_RATES
        if isinstance(request.auth, ApiToken):
            self.scope, ident = "token", str(request.auth.pk)
        elif request.user and request.user.is_authenticated:
            self.scope, ident = "user", str(request.user.pk)
        else:
            self.scope, ident = "anon", self.get_ident(request)
        self.rate = rates.get(self.scope)
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.key = self.cache_format % {"scope": self.scope, "ident": ident}
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: APIView) -> str:
        return self.key
