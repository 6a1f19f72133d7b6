"""A press of Ready (``matchmaking.lifecycle.ready``) as one statement, on PostgreSQL.

It locks the match, then its sides and players (so a player who waited for another's press
reads that press as it committed), marks the player ready, their side ready once all its
players are, and schedules the match when no side is left waiting for anyone: what the ORM
twin does in five statements, and as a single statement it needs no transaction of its
own. Other databases run the twin.
"""

from __future__ import annotations

from datetime import datetime

from core import db
from ladder.matches import states
from ladder.models import Ladder, Match, MatchSide, Participant

_MATCH = Match._meta.db_table
_LADDER = Ladder._meta.db_table
_SIDE = MatchSide._meta.db_table
_PARTICIPANT = Participant._meta.db_table
# The ready check's one transition (``ladder.matches.states.ALL_READY``): from its one state, to play.
(_READY_CHECK,) = states.ALL_READY.source_values
_SCHEDULED = states.ALL_READY.target.value

READY_SQL = f"""
WITH m AS MATERIALIZED (
    SELECT m.id, m.status, l.play_window_minutes
    FROM {_MATCH} m JOIN {_LADDER} l ON l.id = m.ladder_id
    WHERE m.id = %(match)s FOR UPDATE OF m
), s AS MATERIALIZED (
    SELECT s.id, s.ready_at FROM {_SIDE} s
    WHERE s.match_id = (SELECT id FROM m) AND (SELECT status FROM m) = '{_READY_CHECK}'
    ORDER BY s.id FOR UPDATE
), p AS MATERIALIZED (
    SELECT p.id, p.side_id, p.player_id, p.ready_at FROM {_PARTICIPANT} p
    WHERE p.match_id = (SELECT id FROM m) AND (SELECT status FROM m) = '{_READY_CHECK}'
    ORDER BY p.id FOR UPDATE
), me AS (
    SELECT id, side_id FROM p WHERE player_id = %(user)s
), waiting AS (
    -- the sides still waiting for someone once this press counts
    SELECT s.id FROM s WHERE s.ready_at IS NULL
      AND EXISTS (SELECT 1 FROM p WHERE p.side_id = s.id AND p.ready_at IS NULL AND p.player_id <> %(user)s)
), pressed AS (
    UPDATE {_PARTICIPANT} AS t SET ready_at = coalesce(t.ready_at, %(now)s)
    FROM me WHERE t.id = me.id
    RETURNING t.id
), marked AS (
    UPDATE {_SIDE} AS t SET ready_at = coalesce(t.ready_at, %(now)s)
    FROM me WHERE t.id = me.side_id AND t.id NOT IN (SELECT id FROM waiting)
    RETURNING t.id
), scheduled AS (
    UPDATE {_MATCH} AS t
    SET status = '{_SCHEDULED}',
        play_deadline = %(now)s + make_interval(mins => (SELECT play_window_minutes FROM m))
    WHERE t.id = (SELECT id FROM m) AND EXISTS (SELECT 1 FROM me) AND NOT EXISTS (SELECT 1 FROM waiting)
    RETURNING t.play_deadline
)
SELECT m.status, EXISTS (SELECT 1 FROM me), (SELECT play_deadline FROM scheduled) FROM m
"""


def press_ready(match_id: int, user_id: int, now: datetime) -> tuple[str, bool, datetime | None] | None:
    """(the match's status before, whether ``user_id`` plays in it, the play deadline if it is now scheduled);
    ``None`` when there is no such match. Nothing is written unless the match is in its ready check and
    ``user_id`` plays in it."""
    with db.prepared_cursor() as cursor:
        cursor.execute(READY_SQL, {"match": match_id, "user": user_id, "now": now})
        row = cursor.fetchone()
    return None if row is None else (row[0], row[1], row[2])
