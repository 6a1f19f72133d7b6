"""The sessions an account is signed in with (docs/security.md, "Sessions").

At each sign-in (``user_logged_in``) the session's key gets an ``AccountSession`` row with the
device its User-Agent names ("Firefox on Windows"); ``SessionSeenMiddleware`` moves the row's
last use forward at most every ``SEEN_EVERY``, so a page or a poll costs nothing more in
between; signing out deletes the row. *Settings* lists the rows of sessions that can still be
used, and "Sign out everywhere else" ends the others: their sessions are deleted from the
session store, so the next request with that cookie is signed out. A new password does the
same for every session but the one that set it (a reset: every session).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timedelta
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from accounts.models import AccountSession, User

SEEN_EVERY = timedelta(minutes=5)
SEEN_KEY = "_account_seen"  # in the session: when its row was last moved forward (a POSIX time)


def device_name(user_agent: str) -> str:
    """What a person calls the device of ``user_agent``: "Firefox on Windows", "Mobile Safari
    on iPhone", "Python Requests"; "Unknown device" when it names nothing known."""
    parsed = _parse(user_agent[:500])
    browser = parsed.user_agent.family if parsed.user_agent and parsed.user_agent.family != "Other" else ""
    system = ""
    if parsed.device and parsed.device.family not in ("Other", "Generic Smartphone", "Spider"):
        system = parsed.device.family
    elif parsed.os and parsed.os.family != "Other":
        system = parsed.os.family
    if browser and system:
        return f"{browser} on {system}"[:120]
    return (browser or system or "Unknown device")[:120]


@functools.lru_cache(maxsize=256)
def _parse(user_agent: str) -> Any:
    from ua_parser import parse

    return parse(user_agent)


def _store(session_key: str) -> SessionBase:
    engine = import_module(settings.SESSION_ENGINE)
    store: SessionBase = engine.SessionStore(session_key)
    return store


def session_record(*, user: User, request: HttpRequest, now: datetime) -> AccountSession | None:
    """The row of ``request``'s session, signed in as ``user`` now (made or, if the key is known, renewed)."""
    session = request.session
    if session.session_key is None:
        session.save()
    if session.session_key is None:
        return None
    session[SEEN_KEY] = now.timestamp()
    row, _ = AccountSession.objects.update_or_create(
        session_key=session.session_key,
        defaults={"user": user, "last_seen_at": now, "device": device_name(request.headers.get("user-agent", ""))},
        create_defaults={
            "user": user,
            "signed_in_at": now,
            "last_seen_at": now,
            "device": device_name(request.headers.get("user-agent", "")),
        },
    )
    return row


def sessions_of(*, user: User, now: datetime) -> list[AccountSession]:
    """``user``'s sessions that can still be used (seen within the session's lifetime), latest first."""
    since = now - timedelta(seconds=settings.SESSION_COOKIE_AGE)
    return list(AccountSession.objects.filter(user=user, last_seen_at__gte=since))


def sessions_end(*, user: User, keep: str | None = None) -> int:
    """Sign ``user`` out of every session but ``keep`` (a session key): each is deleted from
    the session store, its row with it. Returns how many were ended."""
    rows = AccountSession.objects.filter(user=user)
    if keep:
        rows = rows.exclude(session_key=keep)
    keys = list(rows.values_list("session_key", flat=True))
    for key in keys:
        _store(key).delete()
    AccountSession.objects.filter(session_key__in=keys).delete()
    return len(keys)


def session_rekeyed(*, old_key: str | None, request: HttpRequest) -> None:
    """The session's key changed under it (Django cycles it when the password changes): its row follows."""
    new_key = request.session.session_key
    if old_key and new_key and old_key != new_key:
        AccountSession.objects.filter(session_key=old_key).update(session_key=new_key)


def sessions_sweep(*, now: datetime) -> int:
    """Forget rows of sessions past their lifetime; returns how many."""
    since = now - timedelta(seconds=settings.SESSION_COOKIE_AGE)
    deleted, _ = AccountSession.objects.filter(last_seen_at__lt=since).delete()
    return deleted


def record_session(sender: Any, request: HttpRequest | None, user: User, **kwargs: Any) -> None:
    """The ``user_logged_in`` receiver: a sign-in with a request (not a test's ``force_login``)."""
    if request is not None and hasattr(request, "session"):
        session_record(user=user, request=request, now=timezone.now())


def forget_session(sender: Any, request: HttpRequest | None, user: User | None, **kwargs: Any) -> None:
    """The ``user_logged_out`` receiver: the session is flushed, so its row goes."""
    if request is not None and hasattr(request, "session") and request.session.session_key:
        AccountSession.objects.filter(session_key=request.session.session_key).delete()


def end_sessions_on_reset(sender: Any, user: User, how: str, **kwargs: Any) -> None:
    """The ``password_set`` receiver for resets (a link, or an administrator): every session ends.
    A change by the owner keeps the session that made it (``PasswordChangeView``)."""
    from accounts.signals import PasswordSetBy

    if how == PasswordSetBy.RESET:
        sessions_end(user=user)


class SessionSeenMiddleware:
    """Moves a signed-in session's row forward at most every ``SEEN_EVERY`` (after
    ``AuthenticationMiddleware``); a request without a session cookie is not looked at."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        session = getattr(request, "session", None)
        # Read from the session alone: a request whose view did not load the user (the bell's
        # cached counts) loads none here either, until the row is due.
        if session is None or session.session_key is None or SESSION_KEY not in session:
            return response
        now = timezone.now()
        seen = session.get(SEEN_KEY)
        if seen is None or now.timestamp() - float(seen) >= SEEN_EVERY.total_seconds():
            user = request.user
            if user.is_authenticated:
                assert isinstance(user, User)
                session_record(user=user, request=request, now=now)
        return response
