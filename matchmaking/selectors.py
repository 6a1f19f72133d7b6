"""Reads for the queue panel, which every searching page polls every 2 seconds."""

from __future__ import annotations

from datetime import datetime

from django.core.cache import cache as site_cache
from django.db import connection

from accounts.models import User
from core import db
from ladder.models import Ladder
from matchmaking import services, sql
from matchmaking.models import EntryStatus, QueueEntry


def ladder_and_entry(*, slug: str, player: User) -> tuple[Ladder | None, QueueEntry | None]:
    """The ladder at ``slug`` (None if there is none) and the player's latest search in it, if any.

    One statement on PostgreSQL, whose values need no conversion for these models'
    fields (a test compares the result with the ORM's). Elsewhere, two ORM queries.
    """
    if not db.on_postgresql():
        ladder = Ladder.objects.filter(slug=slug).first()
        if ladder is None:
            return None, None
        entry = QueueEntry.objects.filter(ladder=ladder, player=player).order_by("-pk").first()
    else:
        statement, ladder_names, entry_names = sql.ladder_and_entry()
        with db.prepared_cursor() as cursor:
            cursor.execute(statement, [player.pk, slug])
            row = cursor.fetchone()
        if row is None:
            return None, None
        split = len(ladder_names)
        ladder = Ladder.from_db(connection.alias, ladder_names, row[:split])
        entry = QueueEntry.from_db(connection.alias, entry_names, row[split:]) if row[split] is not None else None
    if entry is not None:
        entry.ladder = ladder
    return ladder, entry


def searching_count(ladder: Ladder) -> int:
    """How many are searching in the ladder, cached for two seconds: every poll shows it."""
    key = f"queue:searching:{ladder.pk}"
    count = site_cache.get(key)
    if count is None:
        count = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING).count()
        site_cache.set(key, count, timeout=2)
    return count


def panel_context(ladder: Ladder, entry: QueueEntry | None, now: datetime) -> dict[str, object]:
    """Everything the panel shows: state, time waited, rating window, searchers, opponent."""
    context: dict[str, object] = {"ladder": ladder, "entry": entry, "searching": searching_count(ladder)}
    if entry is not None and entry.status == EntryStatus.WAITING:
        low, high = services.rating_window(ladder, entry, now)
        context.update(
            waited=int((now - entry.joined_at).total_seconds()),
            window_low=low,
            window_high=high,
            timeout=ladder.queue_timeout_seconds,
        )
    return context
