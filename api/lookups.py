"""The look-ups of a report: its ladder by slug (and whether it has match fields) and its players by username.

Game servers report many results a second, and each report names a ladder and its
players. On PostgreSQL each look-up is one prepared statement (``api.sql``) whose rows
become model instances as the ORM would build them; elsewhere it is the ORM query.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Exists, OuterRef
from django.db.models.functions import Lower

from accounts.models import User
from api import sql
from core import db
from ladder.fields.answers import without_fields
from ladder.models import Ladder, MatchField


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
    if row is None:
        return None
    ladder = db.instance(Ladder, sql.LADDER_FIELDS, row[:-1])
    if not row[-1]:
        without_fields(ladder)
    return ladder


def users_by_username(names: Iterable[str]) -> dict[str, User]:
    """The users named (in any case), by their lower-cased username; unknown names are left out."""
    wanted = sorted({name.lower() for name in names})
    if not db.on_postgresql():
        found = User.objects.annotate(lower=Lower("username")).filter(lower__in=wanted)
        return {user.lower: user for user in found}
    with db.prepared_cursor() as cursor:
        cursor.execute(sql.USERS_BY_USERNAME, [wanted])
        rows = cursor.fetchall()
    users = (db.instance(User, sql.USER_FIELDS, row) for row in rows)
    return {user.username.lower(): user for user in users}
