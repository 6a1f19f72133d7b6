"""Rate limits per client: per token, per signed-in user, per anonymous address.

The API throttles every request with them (``api.throttling``), and ``search_allow`` counts
the leaderboard searches that have to rank the whole ladder (a search or bot filter no one
asked for within the cache period): each costs PostgreSQL about 0.1–0.25 s for 100,000
members, so without their own, lower limit one client sending new searches could keep the
database busy. The API's leaderboard and the site's ladder page share that budget. Cached
answers do not count.

Rates come from ``settings.API_THROTTLE_RATES`` at each request (not at import), so a
deployment or a test can change them. Each answer over the limit is a 429 with
``Retry-After``.

A limit of N per period counts requests in a window opened by the client's first request
and lasting the period; the N+1st request in it is refused until the window ends. The
count is one atomic Redis ``INCR`` (``core.cache.count_in_window``), so concurrent
requests from many processes never get more than N through; DRF's own throttle reads a
list of timestamps and writes it back, and concurrent requests overwrote each other's.
With Redis unavailable requests are let through (the cache logs the outage).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from core.cache import count_in_window

if TYPE_CHECKING:
    from rest_framework.views import APIView


class ClientRateThrottle(SimpleRateThrottle):
    """``token`` scope per token, ``user`` per session user, ``anon`` per client address."""

    scope = "api"
    cache_format = "throttle:%(scope)s:%(ident)s"  # a count, not DRF's list of timestamps

    def get_rate(self) -> str | None:
        return None  # chosen per request in allow_request

    def allow_request(self, request: Request, view: APIView) -> bool:
        self.scope, ident = self._client(request)
        return self._allow(request, view, settings.API_THROTTLE_RATES.get(self.scope), ident)

    def _client(self, request: Request) -> tuple[str, str]:
        """Who is counted: ``("token", its id)``, ``("user", their id)`` or ``("anon", the address)``."""
        # The API's request holds the token that authenticated it (session sign-ins hold
        # none); a site page's request has no ``auth`` at all.
        auth = getattr(request, "auth", None)
        if auth is not None:
            return "token", str(auth.pk)
        if request.user and request.user.is_authenticated:
            return "user", str(request.user.pk)
        return "anon", self.get_ident(request)

    def _allow(self, request: Request, view: APIView, rate: str | None, ident: str) -> bool:
        self.rate = rate
        self._wait: int | None = None
        limit, seconds = self.parse_rate(rate)  # (None, None) for no rate: no limit
        if limit is None or seconds is None:
            return True
        self.num_requests, self.duration = limit, seconds
        self.key = key = self.cache_format % {"scope": self.scope, "ident": ident}
        counted = count_in_window(caches["default"], key, seconds)
        if counted is None:
            return True  # the cache cannot count (Redis is down): let it through
        count, seconds_left = counted
        if count > limit:
            self._wait = seconds_left
            return False
        return True

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        return self.key

    def wait(self) -> int | None:
        """Seconds until the window that refused the request ends (``Retry-After``)."""
        return self._wait


class SearchThrottle(ClientRateThrottle):
    """``search`` scope: leaderboard searches computed anew, per token, session user or address."""

    def allow_request(self, request: Request, view: APIView) -> bool:
        kind, ident = self._client(request)
        self.scope = "search"
        return self._allow(request, view, settings.API_THROTTLE_RATES.get("search"), f"{kind}-{ident}")


def search_allow(request: Request | HttpRequest) -> None:
    """Count one leaderboard search ranked anew against the client's ``search`` limit; ``Throttled`` past it.

    The API's leaderboard and the site's ladder page both call it, so a client's searches
    share one budget whichever they use (a page's client is its signed-in user or address).
    """
    throttle = SearchThrottle()
    if not throttle.allow_request(request, None):  # type: ignore[arg-type]  # no view: the scope says what counts
        raise Throttled(throttle.wait())
