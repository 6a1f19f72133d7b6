"""Who a request comes from, and the limits on failed logins and on sign-ups per client.

Failed logins are counted by django-axes on two keys (``AXES_LOCKOUT_PARAMETERS``): a
username *from one address* is locked after ``AXES_FAILURE_LIMIT`` failures, and an
address for every username after the much higher ``LOGIN_ADDRESS_FAILURE_LIMIT``. So
nobody can lock an account out from elsewhere, and the many people behind one address
(an office, a university, the site's own proxy when it is not configured) are not locked
out by one of them mistyping.

Sign-ups are counted per client address in the cache, in fixed windows: a new account
costs a password hash (0.5–1 s of CPU), so the count is taken before the form is saved.

Both use ``client_address``, which trusts ``X-Forwarded-For`` only as far as
``PROXY_COUNT`` proxies of the site's own put it there.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_cool_off, get_failure_limit
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.timesince import timeuntil

from core.moments import moment_text

logger = logging.getLogger(__name__)

SIGNUP_REFUSED = "Too many accounts were made from your address recently. Try again in {wait} (at {at})."
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def client_address(request: HttpRequest) -> str | None:
    """The address of the client, as far as the site's own proxies vouch for it.

    With ``PROXY_COUNT`` = n > 0, each of the n proxies in front of the site appends the
    address it received the request from to ``X-Forwarded-For``, so the n-th entry from
    the right is the one the outermost proxy saw: the client. Entries further left were
    sent by the client and prove nothing. A request with no (or a malformed) header, such
    as a health check straight to the web process, is counted by ``REMOTE_ADDR``. With
    n = 0 the header is ignored: anyone could write it.
    """
    remote = request.META.get("REMOTE_ADDR") or None
    proxies = settings.PROXY_COUNT
    if proxies:
        forwarded = [part.strip() for part in request.headers.get("x-forwarded-for", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if forwarded:
            candidate = forwarded[-min(proxies, len(forwarded))]
            try:
                return str(ipaddress.ip_address(candidate))
            except ValueError:
                logger.warning("X-Forwarded-For entry %r is not an address; counting %s instead", candidate, remote)
    return remote


def login_records_expire(*, now: datetime) -> int:
    """Delete what django-axes keeps with a raw client address once the throttle no longer needs it.

    A failed attempt counts until ``AXES_COOLOFF_TIME`` after its last failure; axes deletes
    the expired ones only when someone signs in, out or fails. Successful logins are not
    logged (``AXES_DISABLE_ACCESS_LOG``) nor failures one by one (no
    ``AXES_ENABLE_ACCESS_FAILURE_LOG``); any such rows older than the cool-off go too.
    Returns how many rows were deleted.
    """
    threshold = now - settings.AXES_COOLOFF_TIME
    deleted = 0
    for model in (AccessAttempt, AccessLog, AccessFailureLog):
        count, _ = model.objects.filter(attempt_time__lte=threshold).delete()
        deleted += count
    return deleted


def axes_username(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """Count failures per account whatever the case typed, as logins are case-insensitive."""
    source = credentials if credentials else request.POST
    username = source.get("username")
    return username.strip().lower() if isinstance(username, str) else None


class LoginAttemptHandler(AxesDatabaseHandler):
    """Axes' database handler with two limits instead of one.

    ``AXES_LOCKOUT_PARAMETERS`` is ``[["username", "ip_address"], "ip_address"]``, so
    axes hands back two sets of attempts in that order: this username from this address,
    and everything from this address. Axes compares one number with one limit, so
    ``get_failures`` reports the pair's failures, raised to the pair's limit once the
    address as a whole has reached ``LOGIN_ADDRESS_FAILURE_LIMIT``.
    """

    def failure_counts(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> tuple[int, int]:
        """Recent failures of (this username from this address, this address for any username)."""
        pair, address = (
            attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        )
        return pair, address

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        pair, address = self.failure_counts(request, credentials)
        if address >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            return max(pair, get_failure_limit(request, credentials))
        return pair

    def reset_user_attempts(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        """A successful login clears its own username's failures from this address, and no others.

        Axes' default clears every set, the whole address's count included: whoever is
        guessing others' passwords could then reset the address limit by logging in to an
        account of their own now and then.
        """
        pair_attempts, _ = self.filter_user_attempts(request, credentials)
        count, _ = pair_attempts.delete()
        return count


@dataclass(frozen=True, slots=True)
class LoginLock:
    address_wide: bool  # the address's limit for every username, rather than one username's
    limit: int
    retry_after: int  # seconds


def login_lock(request: HttpRequest, credentials: dict[str, Any] | None = None) -> LoginLock:
    """Which limit a locked-out login attempt met, and how long until the next may succeed.

    Every attempt during a lock counts as a failure and starts the cool-off again
    (axes' ``AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT``), so the wait after the
    refused attempt is always the whole cool-off.
    """
    _, address = _handler().failure_counts(request, credentials)
    address_wide = address >= settings.LOGIN_ADDRESS_FAILURE_LIMIT
    cool_off = get_cool_off(request)
    return LoginLock(
        address_wide=address_wide,
        limit=settings.LOGIN_ADDRESS_FAILURE_LIMIT if address_wide else get_failure_limit(request, credentials),
        retry_after=int(cool_off.total_seconds()) if cool_off else 0,
    )


def login_warning(request: HttpRequest, credentials: dict[str, Any] | None = None) -> str | None:
    """What one more failed login would lock, if it would: shown on the login form after a failure.

    Axes has counted the failure by the time the form is drawn again, so one short of a
    limit means the next failure meets it. The address's limit is named first: it locks
    every account, the pair's only this one.
    """
    AxesProxyHandler.update_request(request)
    pair, address = _handler().failure_counts(request, credentials)
    cool_off = get_cool_off(request)
    wait = wait_words(int(cool_off.total_seconds()) if cool_off else 0)
    if address == settings.LOGIN_ADDRESS_FAILURE_LIMIT - 1:
        return f"One more failed attempt locks this address for {wait}, for every account."
    if pair == get_failure_limit(request, credentials) - 1:
        return f"One more failed attempt locks this account for this address for {wait}."
    return None


def _handler() -> LoginAttemptHandler:
    handler = AxesProxyHandler.get_implementation()
    if not isinstance(handler, LoginAttemptHandler):
        raise ImproperlyConfigured("AXES_HANDLER must be accounts.throttling.LoginAttemptHandler")
    return handler


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """The 429 page axes answers a locked-out login with (``AXES_LOCKOUT_CALLABLE``), with ``Retry-After``."""
    lock = login_lock(request, credentials)
    context = {"lock": lock, "wait": wait_words(lock.retry_after), "retry_at": _retry_at(lock.retry_after)}
    response = render(request, settings.AXES_LOCKOUT_TEMPLATE, context, status=429)
    response["Retry-After"] = str(lock.retry_after)
    return response


def signup_wait(*, request: HttpRequest) -> int:
    """Seconds until the client's address may make an account again (0: now), counting nothing."""
    return _signup_count(request=request, take=False)


def signup_take(*, request: HttpRequest) -> int:
    """Count one new account for the client's address: 0 if it may go ahead, else seconds to wait.

    ``cache.add`` then ``cache.incr`` are atomic in Redis, so concurrent sign-ups from one
    address cannot all slip under the limit. Windows are fixed (every hour on the hour
    for ``5/hour``), which allows up to twice the rate across a window's edge and needs no
    clock but the cache's. A cache that fails lets the sign-up through, logged: refusing
    every newcomer while Redis is down would be worse than a burst of accounts.
    """
    return _signup_count(request=request, take=True)


def _signup_count(*, request: HttpRequest, take: bool) -> int:
    rate = settings.SIGNUP_RATE
    if not rate:
        return 0
    number, period = rate.split("/")
    limit, seconds = int(number), _PERIODS[period[0]]
    now = time.time()
    window = int(now // seconds)
    retry_after = max(1, int((window + 1) * seconds - now))
    key = f"signup:{client_address(request)}:{seconds}:{window}"
    try:
        if not take:
            count = cache.get(key, 0)
            return retry_after if count >= limit else 0
        if cache.add(key, 1, timeout=retry_after + 1):
            count = 1
        else:
            try:
                count = cache.incr(key)
            except ValueError:  # the window's entry expired between add and incr
                cache.set(key, 1, timeout=retry_after + 1)
                count = 1
    except Exception:
        # Any cache failure (Redis down or stalled) lets the sign-up through.
        logger.exception("Sign-up limit not checked for %s: the cache failed", client_address(request))
        return 0
    return retry_after if count > limit else 0


def signup_refused_message(retry_after: int) -> str:
    return SIGNUP_REFUSED.format(wait=wait_words(retry_after), at=moment_text(_retry_at(retry_after), "time"))


def wait_words(seconds: int) -> str:
    """``"14 minutes"``, ``"1 hour, 5 minutes"``: how long a wait is, for people."""
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    now = timezone.now()
    return timeuntil(now + timedelta(seconds=seconds + 59), now)


def _retry_at(seconds: int) -> Any:
    return timezone.localtime() + timedelta(seconds=seconds)
