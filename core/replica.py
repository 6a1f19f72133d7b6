"""The optional read replica (``DATABASE_REPLICA_URL``): which reads it serves, and when the primary does.

With the replica set, settings add the database alias ``replica``, ``ReplicaRouter`` and
``ReplicaMiddleware``; unset, none of them is installed and every read goes to ``default``.

A read goes to the replica only when all of these hold:

- the view opted in (``replica_reads`` around it in its URLconf, or ``replica_reads = True`` on
  its class): the ladder page with its leaderboard, the statistics pages, the API's public reads;
- the request is a GET or a HEAD;
- the client is not pinned to the primary: a client whose unsafe request (POST, PUT, PATCH,
  DELETE) succeeded within ``DATABASE_REPLICA_PIN_SECONDS`` reads the primary, so it sees its
  own writes. A browser is pinned by a signed cookie (no shared state, any web process); an
  API client by its ``Authorization`` header's hash in the cache; a signed-in account, on every
  device, by its id in the cache;
- no transaction is open on the primary (a read in an ``atomic`` block, or a locking read,
  may be followed by a write that depends on it);
- the replica answered its last check (``check``, at most every
  ``DATABASE_REPLICA_CHECK_SECONDS`` per process) no more than ``DATABASE_REPLICA_MAX_LAG_SECONDS``
  behind, and answers this request's connection check.

Otherwise the read goes to the primary: a stopped, unreachable or lagging replica costs
the primary those reads, never an error page. A request decides once, at its first read,
so all its reads come from one database; if a read on the replica fails under it, its view
runs again on the primary. Writes always go to the primary.

The pin outlasts what a replica may lag behind unnoticed (settings require
``PIN_SECONDS > MAX_LAG_SECONDS + CHECK_SECONDS``): a write committed at T is on the replica
before the replica can serve the writer again. Hand-written reads on these paths take
their connection from ``read_connection()``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core import signing
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.http import HttpRequest, HttpResponseBase

logger = logging.getLogger(__name__)

REPLICA = "replica"
PIN_COOKIE = "ladder_primary"
_PIN_SALT = "core.replica.pin"
_SAFE_METHODS = frozenset({"GET", "HEAD"})
_READ_ONLY_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})

View = TypeVar("View", bound=Callable[..., Any])


def configured() -> bool:
    return REPLICA in settings.DATABASES


def replica_reads(view: View) -> View:
    """Marks a function view whose GET and HEAD may read from the replica (see the module docstring)."""
    view.replica_reads = True  # type: ignore[attr-defined]
    return view


def _opted_in(view: Callable[..., Any]) -> bool:
    if getattr(view, "replica_reads", False):
        return True
    # Class views: Django's as_view() keeps the class as ``view_class`` (DRF's keeps it too).
    return bool(getattr(getattr(view, "view_class", None), "replica_reads", False))


# Replica health, per process --------------------------------------------------------------

# Seconds the replica is behind the primary: 0 when it has replayed all it received (an idle
# primary sends nothing, so the last replayed commit's age would grow with no lag at all), else
# the age of the last commit it replayed. No WAL receiver means it lost the primary: unknown.
LAG_SQL = """
    SELECT pg_is_in_recovery(),
        EXISTS (SELECT 1 FROM pg_stat_wal_receiver),
        CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
            ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END
"""


@dataclass(frozen=True, slots=True)
class Health:
    usable: bool
    state: str  # "streaming", "behind", "not streaming", "not a standby", "unreachable"
    lag_seconds: float | None = None
    checked_at: float = -math.inf  # time.monotonic()

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"in_use": self.usable, "state": self.state}
        if self.lag_seconds is not None:
            body["lag_seconds"] = round(self.lag_seconds, 3)
        return body


class _Process:
    health = Health(usable=False, state="unknown")


def _replica() -> BaseDatabaseWrapper:
    return connections[REPLICA]


def measure() -> Health:
    """Ask the replica how far behind it is (one small query; nothing is cached)."""
    wrapper = _replica()
    now = time.monotonic()
    try:
        with wrapper.cursor() as cursor:
            cursor.execute(LAG_SQL)
            in_recovery, receiving, lag = cursor.fetchone()
    except DatabaseError as exc:
        logger.warning("read replica unreachable, reading from the primary: %s", exc)
        wrapper.close()  # a broken connection is opened anew at the next check
        return Health(usable=False, state="unreachable", checked_at=now)
    if not in_recovery:
        # Promoted, or the URL names a primary: it takes writes of its own, so it is no copy of this one.
        return Health(usable=False, state="not a standby", checked_at=now)
    if not receiving:
        return Health(usable=False, state="not streaming", checked_at=now)
    if lag is None or lag > settings.DATABASE_REPLICA_MAX_LAG_SECONDS:
        return Health(usable=False, state="behind", lag_seconds=lag, checked_at=now)
    return Health(usable=True, state="streaming", lag_seconds=max(lag, 0.0), checked_at=now)


def check() -> Health:
    """The replica's health as last measured in this process, measured again once it is older
    than ``DATABASE_REPLICA_CHECK_SECONDS``."""
    health = _Process.health
    if time.monotonic() - health.checked_at >= settings.DATABASE_REPLICA_CHECK_SECONDS:
        before, health = health, measure()
        _Process.health = health
        if health.state != before.state and before.state != "unknown":
            logger.warning("read replica %s (was %s)", health.state, before.state)
    return health


def _connection_answers() -> bool:
    """Django's own check of the replica's connection for this request (as for the primary's
    with ``conn_health_checks``), done here so a replica stopped since the last ``check`` means
    reads from the primary rather than an error."""
    wrapper = _replica()
    try:
        wrapper.close_if_health_check_failed()
        wrapper.ensure_connection()
    except DatabaseError as exc:
        logger.warning("read replica unreachable, reading from the primary: %s", exc)
        wrapper.close()
        _Process.health = Health(usable=False, state="unreachable", checked_at=time.monotonic())
        return False
    return True


# Routing -----------------------------------------------------------------------------------


class _Scope:
    """One opted-in request's choice of database, made at its first read, and its view (to run
    again on the primary if the replica fails under it)."""

    __slots__ = ("alias", "view")

    def __init__(self, view: Callable[[], HttpResponseBase]) -> None:
        self.alias: str | None = None
        self.view = view


_scope: ContextVar[_Scope | None] = ContextVar("core_replica_scope", default=None)


def read_alias() -> str:
    """The alias a read made now goes to (see the module docstring); ``default`` outside an opted-in request."""
    scope = _scope.get()
    if scope is None or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    if scope.alias is None:
        scope.alias = REPLICA if check().usable and _connection_answers() else DEFAULT_DB_ALIAS
    return scope.alias


def read_connection() -> BaseDatabaseWrapper:
    """The connection for a hand-written read on a path the replica may serve."""
    return connections[read_alias()]


class ReplicaRouter:
    """Reads of opted-in requests to the replica (``read_alias``); every write, and every other
    read, to the primary. Migrations run on the primary only: the replica copies them."""

    def db_for_read(self, model: type[Any], **hints: Any) -> str:
        return read_alias()

    def db_for_write(self, model: type[Any], **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # the same data on both

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


# Pinning a client that wrote ---------------------------------------------------------------


def _credential_key(header: str) -> str:
    return "replica:pin:credential:" + hashlib.sha256(header.encode()).hexdigest()


def _account_key(user_id: object) -> str:
    return f"replica:pin:account:{user_id}"


def _pin_cookie_valid(value: str) -> bool:
    try:
        signing.TimestampSigner(salt=_PIN_SALT).unsign(value, max_age=settings.DATABASE_REPLICA_PIN_SECONDS)
    except signing.BadSignature:  # also an expired one
        return False
    return True


def pinned(request: HttpRequest) -> bool:
    """Whether the client wrote within ``DATABASE_REPLICA_PIN_SECONDS`` (by cookie, credential or account)."""
    cookie = request.COOKIES.get(PIN_COOKIE)
    if cookie and _pin_cookie_valid(cookie):
        return True
    keys = []
    if header := request.META.get("HTTP_AUTHORIZATION"):
        keys.append(_credential_key(header))
    session = getattr(request, "session", None)
    if session is not None and (user_id := session.get(SESSION_KEY)) is not None:
        keys.append(_account_key(user_id))
    return bool(keys) and bool(cache.get_many(keys))


def pin(request: HttpRequest, response: HttpResponseBase) -> None:
    """Pin the client of a successful write to the primary for ``DATABASE_REPLICA_PIN_SECONDS``."""
    seconds = settings.DATABASE_REPLICA_PIN_SECONDS
    keys = []
    if header := request.META.get("HTTP_AUTHORIZATION"):
        keys.append(_credential_key(header))
    else:
        response.set_cookie(
            PIN_COOKIE,
            signing.TimestampSigner(salt=_PIN_SALT).sign("1"),
            max_age=seconds,
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
            samesite="Lax",
        )
    # The account of a session or a token (DRF sets it on the request once it authenticates),
    # or the one just signed in: its other devices and tokens read the primary too.
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        keys.append(_account_key(user.pk))
    if keys:
        cache.set_many(dict.fromkeys(keys, 1), timeout=seconds)


class ReplicaMiddleware:
    """Opens the replica to an opted-in view's safe request, unless the client is pinned; runs
    the view again on the primary if the replica fails under it; and pins the client of every
    successful unsafe request."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        try:
            response = self.get_response(request)
        finally:
            _scope.set(None)  # a thread's context outlives its request
        if request.method not in _READ_ONLY_METHODS and response.status_code < 400:
            pin(request, response)
        return response

    def process_view(
        self, request: HttpRequest, view: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        if request.method in _SAFE_METHODS and _opted_in(view) and not pinned(request):
            _scope.set(_Scope(lambda: view(request, *args, **kwargs)))

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponseBase | None:
        """A read on the replica failed (it stopped or restarted since this request checked it, or
        cancelled the statement for a conflict with its replay): the view again, on the primary.

        A safe request's view only reads, so running it twice changes nothing. If the primary
        fails too, the first error goes on to ``core.middleware`` (a 503)."""
        scope = _scope.get()
        if scope is None or scope.alias != REPLICA or not isinstance(exception, DatabaseError):
            return None
        wrapper = _replica()
        if not wrapper.errors_occurred:  # not the replica's error
            return None
        logger.warning("a read on the replica failed, reading from the primary: %s", exception)
        if not wrapper.in_atomic_block:
            wrapper.close()  # opened anew by the next request that reads there
        scope.alias = DEFAULT_DB_ALIAS
        try:
            response = scope.view()
            if callable(getattr(response, "render", None)):  # a TemplateResponse, DRF's Response
                response = response.render()  # type: ignore[attr-defined]
        except DatabaseError:
            logger.warning("the primary failed as well", exc_info=True)
            return None
        return response
