"""Reads for the queue panel, which every searching page polls every 2 seconds."""

from __future__ import annotations

from datetime import datetime

from django.core.cache import cache as site_cache
from django.db import connection

from accounts.models import User
from core import db
from ladder.models import Ladder, MatchStatus
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


def _searching_key(ladder: Ladder) -> str:
    return f"queue:searching:{ladder.pk}"


def searching_count(ladder: Ladder) -> int:
    """How many are searching in the ladder, cached for two seconds: every poll shows it."""
    count = site_cache.get(_searching_key(ladder))
    if count is None:
        count = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING).count()
        site_cache.set(_searching_key(ladder), count, timeout=2)
    return count


def searching_forget(ladder: Ladder) -> None:
    """Drop the cached count after a join or a cancel, so the player's next panel counts them right."""
    site_cache.delete(_searching_key(ladder))


def panel_context(ladder: Ladder, entry: QueueEntry | None, now: datetime) -> dict[str, object]:
    """Everything the panel shows: state, time waited, rating window, searchers, opponent.

    ``searching`` counts the others: the viewer's own search is no opponent. ``paired`` is
    a pairing still to be played; once its match is reported (or void) the panel is idle
    again and names it as ``last_match``.
    """
    searching = searching_count(ladder)
    waiting = entry is not None and entry.status == EntryStatus.WAITING
    match = entry.match if entry is not None and entry.status == EntryStatus.MATCHED else None
    paired = match is not None and match.status == MatchStatus.SCHEDULED
    context: dict[str, object] = {
        "ladder": ladder,
        "entry": entry,
        "searching": max(searching - 1, 0) if waiting else searching,
        "paired": paired,
        "last_match": None if paired else match,
    }
    if entry is not None and waiting:
        low, high = services.rating_window(ladder, entry, now)
        context.update(
            waited=int((now - entry.joined_at).total_seconds()),
            window_low=low,
            window_high=high,
            timeout=ladder.queue_timeout_seconds,
        )
    return context
