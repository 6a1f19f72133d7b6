"""The stats app's seam to the database: each statement in its PostgreSQL and its ORM form.

Each function here is one statement (or one short run of them) and chooses, in one place,
between the hand-written SQL of ``stats.sql`` (PostgreSQL) and its ORM twin, the Python
counting of ``stats.counting`` (other databases: ``make run``'s SQLite), through
``core.db.on_postgresql()``; callers never ask which database they are on. The tests run
both sides (``core.db.orm_twins()`` makes PostgreSQL take the twins).
"""

from __future__ import annotations

from collections.abc import Sequence

from core import db
from ratings.models import RatingEvent
from stats import counting, sql
from stats.models import FieldValueStat, HeadToHead, PlayerFieldStat


def matches_add(ladder_id: int, match_ids: Sequence[int]) -> None:
    """Add the results of ``match_ids``, rated in ``ladder_id``, to the three tables."""
    if db.on_postgresql():
        sql.add_matches(ladder_id, list(match_ids))
        return
    events = RatingEvent.objects.filter(match_id__in=list(match_ids), is_active=True)
    counting.add(ladder_id, counting.count(events))


def ladder_recount(ladder_id: int) -> None:
    """Delete ``ladder_id``'s rows and count its active match events again (in the caller's transaction)."""
    if db.on_postgresql():
        sql.rebuild(ladder_id)
        return
    for model in (HeadToHead, FieldValueStat, PlayerFieldStat):
        model.objects.filter(ladder_id=ladder_id).delete()
    events = RatingEvent.objects.filter(ladder_id=ladder_id, is_active=True, match__isnull=False)
    counting.add(ladder_id, counting.count(events))
