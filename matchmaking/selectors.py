"""Reads for the queue panel, which every searching page polls every 2 seconds."""

from __future__ import annotations

from functools import cache

from django.db import connection

from accounts.models import User
from ladder import db
from ladder.models import Ladder
from matchmaking.models import QueueEntry


@cache
def _ladder_and_entry_sql() -> tuple[str, list[str], list[str]]:
    """Every column of the ladder, then every column of the player's latest search in it (or NULLs)."""
    ladder_fields, entry_fields = Ladder._meta.concrete_fields, QueueEntry._meta.concrete_fields
    columns = [f"l.{field.column}" for field in ladder_fields] + [f"e.{field.column}" for field in entry_fields]
    ladders, entries = Ladder._meta.db_table, QueueEntry._meta.db_table
    sql = (
        f"SELECT {', '.join(columns)} FROM {ladders} AS l LEFT JOIN {entries} AS e ON e.id = "
        f"(SELECT MAX(id) FROM {entries} WHERE ladder_id = l.id AND player_id = %s) WHERE l.slug = %s"
    )
    return sql, [field.attname for field in ladder_fields], [field.attname for field in entry_fields]


def ladder_and_entry(*, slug: str, player: User) -> tuple[Ladder | None, QueueEntry | None]:
    """The ladder at ``slug`` (None if there is none) and the player's latest search in it, if any.

    One statement on PostgreSQL, whose values need no conversion for these models'
    fields (a test compares the result with the ORM's). Elsewhere, two ORM queries.
    """
    if not db.postgresql():
        ladder = Ladder.objects.filter(slug=slug).first()
        if ladder is None:
            return None, None
        entry = QueueEntry.objects.filter(ladder=ladder, player=player).order_by("-pk").first()
    else:
        sql, ladder_names, entry_names = _ladder_and_entry_sql()
        with db.prepared_cursor() as cursor:
            cursor.execute(sql, [player.pk, slug])
            row = cursor.fetchone()
        if row is None:
            return None, None
        split = len(ladder_names)
        ladder = Ladder.from_db(connection.alias, ladder_names, row[:split])
        entry = QueueEntry.from_db(connection.alias, entry_names, row[split:]) if row[split] is not None else None
    if entry is not None:
        entry.ladder = ladder
    return ladder, entry
