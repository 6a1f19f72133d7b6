"""The API's seam to the database: each statement in its PostgreSQL and its ORM form.

Each function here is one statement and chooses, in one place, between its hand-written
SQL (``api.sql``, PostgreSQL) and its ORM twin (other databases: ``make run``'s SQLite),
through ``core.db.on_postgresql()``; callers never ask which database they are on. The
tests run both sides (``core.db.orm_twins()`` makes PostgreSQL take the twins).

They are the hot paths of a report and of every authenticated request: the token, a
report's ladder by slug (and whether it has match fields) and its players by username,
and the insert of its idempotency key. Game servers report many results a second; on PostgreSQL each
look-up is one prepared statement whose rows become model instances as the ORM would
build them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.contrib import auth
from django.contrib.auth.backends import ModelBackend
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.db.models.functions import Lower

from accounts.models import User
from api import sql
from api.models import ApiToken, IdempotencyKey
from core import db
from ladder.fields.answers import without_fields
from ladder.models import Ladder, MatchField
from ladder.standings.leaderboard import cached, cached_entry


def ladder_by_slug(slug: str) -> Ladder | None:
    """The ladder, known to have no match fields when it has none (``ladder_fields`` then reads nothing)."""
    if not db.on_postgresql():
        fields = MatchField.objects.filter(ladder=OuterRef("pk"))
        found = Ladder.objects.filter(slug=slug).annotate(has_fields=Exists(fields)).first()
        if found is not None and not found.has_fields:
            without_fields(found)
        return found
    with db.prepared_cursor() as cursor:
        cursor.execute(sql.LADDER_BY_SLUG, [slug])
        row = cursor.fetchone()
    return None if row is None else _ladder(row)


def report_rows(slug: str, names: Iterable[str]) -> tuple[Ladder | None, dict[str, User]]:
    """``ladder_by_slug(slug)`` and ``users_by_username(names)``: a report's ladder and players, in one statement."""
    if not db.on_postgresql():
        return ladder_by_slug(slug), users_by_username(names)
    with db.prepared_cursor() as cursor:
        cursor.execute(sql.REPORT_ROWS, [slug, _lowered(names)])
        rows = cursor.fetchall()
    width = 1 + len(sql.LADDER_FIELDS) + 1  # the part (1 the ladder, 2 a user), the ladder's columns, has-fields
    ladder = next((_ladder(row[1:width]) for row in rows if row[0] == 1), None)
    return ladder, _by_name(row[width:] for row in rows if row[0] == 2)


def users_by_username(names: Iterable[str]) -> dict[str, User]:
    """The users named (in any case), by their lower-cased username; unknown names are left out."""
    wanted = _lowered(names)
    if not db.on_postgresql():
        found = User.objects.annotate(lower=Lower("username")).filter(lower__in=wanted)
        return {user.lower: user for user in found}
    with db.prepared_cursor() as cursor:
        cursor.execute(sql.USERS_BY_USERNAME, [wanted])
        return _by_name(cursor.fetchall())


def _lowered(names: Iterable[str]) -> list[str]:
    return sorted({name.lower() for name in names})


def _ladder(row: Sequence[Any]) -> Ladder:
    """A ladder from its columns (``sql.LADDER_FIELDS``) and, last, whether it has match fields."""
    ladder = db.instance(Ladder, sql.LADDER_FIELDS, row[:-1])
    if not row[-1]:
        without_fields(ladder)
    return ladder


def _by_name(rows: Iterable[Sequence[Any]]) -> dict[str, User]:
    """Users from their columns (``sql.USER_FIELDS``), by lower-cased username."""
    users = (db.instance(User, sql.USER_FIELDS, row) for row in rows)
    return {user.username.lower(): user for user in users}


def live_token(key_hash: str) -> ApiToken | None:
    """The live token of an active user with this hash, its ``user`` loaded; else ``None``.

    On PostgreSQL it is one prepared statement that also reads the user's permissions (their
    own and their groups') into the cache ``ModelBackend`` keeps on the user, so the
    permission checks of the request (moderator, trusted reporter) need no query of their
    own. Other backends are asked as usual; and with a ``ModelBackend`` subclass that
    changes how permissions are found, the cache is left for it to fill.
    """
    if not db.on_postgresql():
        return ApiToken.objects.live().select_related("user").filter(key_hash=key_hash, user__is_active=True).first()
    with db.prepared_cursor() as cursor:
        cursor.execute(sql.LIVE_TOKEN, [key_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(sql.TOKEN_FIELDS)
    token = db.instance(ApiToken, sql.TOKEN_FIELDS, row[:split])
    token.user = db.instance(User, sql.USER_FIELDS, row[split : split + len(sql.USER_FIELDS)])
    if not token.user.is_superuser and _stock_model_backends():  # a superuser's are all of them
        token.user._perm_cache = set(row[-1])
    return token


def _stock_model_backends() -> bool:
    """Whether every ``ModelBackend`` configured keeps its own permission logic, so the
    statement's permissions are what it would find. (Other backends never read its cache.)"""
    return all(
        getattr(type(backend), name) is getattr(ModelBackend, name)
        for backend in auth.get_backends()
        if isinstance(backend, ModelBackend)
        for name in _PERMISSION_METHODS
    )


_PERMISSION_METHODS = (
    "has_perm",
    "get_all_permissions",
    "get_user_permissions",
    "get_group_permissions",
    "_get_permissions",
    "_get_user_permissions",
    "_get_group_permissions",
)


def idempotency_store(*, user: User, key: str, request_hash: str, status: int, text: str) -> bool:
    """Insert the key's row with the response (``text``, JSON); False, inserting nothing, when
    another request with the key committed first (a concurrent one is waited for)."""
    if db.on_postgresql():
        with db.prepared_cursor() as cursor:
            cursor.execute(sql.IDEMPOTENCY_STORE, [user.pk, key, request_hash, status, text])
            return cursor.fetchone() is not None
    try:
        with transaction.atomic():
            IdempotencyKey.objects.create(
                user=user, key=key, request_hash=request_hash, response_status=status, response_body=json.loads(text)
            )
    except IntegrityError:
        return False
    return True


def leaderboard_page(
    key: str,
    *,
    searching: bool,
    seconds: int,
    in_order: Callable[[], tuple[float, bytes]],
    ranked: Callable[[], bytes],
    source: str,
) -> bytes:
    """A leaderboard page's body, cached under ``key``: on PostgreSQL a plain page (no search, no bot
    filter) is cut from the ladder's cached ranking (``in_order``, expiring with ``source``); a
    search, a bot filter and other databases cache the page ranked for itself (``ranked``)."""
    if db.on_postgresql() and not searching:
        _, body = cached_entry(key, in_order, source=source)
        return body
    return cached(key, seconds, ranked)
