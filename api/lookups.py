"""The look-ups of a report: its ladder by slug and its players by username.

Game servers report many results a second, and each report names a ladder and its
players. On PostgreSQL each look-up is one prepared statement (``core.db``) whose rows
become model instances as the ORM would build them; elsewhere it is the ORM query.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models.functions import Lower

from accounts.models import User
from core import db
from ladder.models import Ladder

_LADDER_FIELDS, _LADDER_COLUMNS = db.column_list(Ladder, "l")
_USER_FIELDS, _USER_COLUMNS = db.column_list(User, "u")
_LADDER_SQL = f"SELECT {_LADDER_COLUMNS} FROM {Ladder._meta.db_table} l WHERE l.slug = %s"
# lower(username) is what the case-insensitive unique index covers.
_USERS_SQL = f"SELECT {_USER_COLUMNS} FROM {User._meta.db_table} u WHERE lower(u.username) = ANY(%s)"


def ladder_by_slug(slug: str) -> Ladder | None:
    if not db.on_postgresql():
        return Ladder.objects.filter(slug=slug).first()
    with db.prepared_cursor() as cursor:
        cursor.execute(_LADDER_SQL, [slug])
        row = cursor.fetchone()
    return None if row is None else db.instance(Ladder, _LADDER_FIELDS, row)


def users_by_username(names: Iterable[str]) -> dict[str, User]:
    """The users named (in any case), by their lower-cased username; unknown names are left out."""
    wanted = sorted({name.lower() for name in names})
    if not db.on_postgresql():
        found = User.objects.annotate(lower=Lower("username")).filter(lower__in=wanted)
        return {user.lower: user for user in found}
    with db.prepared_cursor() as cursor:
        cursor.execute(_USERS_SQL, [wanted])
        rows = cursor.fetchall()
    users = (db.instance(User, _USER_FIELDS, row) for row in rows)
    return {user.username.lower(): user for user in users}
