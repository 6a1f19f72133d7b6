"""Every hand-written statement of the ratings app, and the small functions that run them.

They run on PostgreSQL only. ``ratings.store`` chooses between each and its ORM twin,
which it holds too (the replay's, the rating store's, the replay jobs' and the settings
timeline's); the replay jobs' progress updates run on the connection of their own that
``ratings.store.progress_connection`` opens on PostgreSQL only. The tests run both sides
of each pair (``core.db.orm_twins()`` makes PostgreSQL take the twins).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from psycopg.types.datetime import TimestamptzLoader
from psycopg.types.json import Jsonb

from ratings.history import CHANGE_COLUMNS, STANDING_FIELDS, ChangeRow, Standing
from ratings.models import ChangeValues, PlayerRating, RatingChange, ReplayJob, SupersededChange

# PostgreSQL types of a standing's fields, for the statements that store standings.
STANDING_TYPES = {
    "rating": "float8",
    "rd": "float8",
    "volatility": "float8",
    "rd_as_of": "timestamptz",
    "games": "int",
    "wins": "int",
    "losses": "int",
    "draws": "int",
    "last_played_at": "timestamptz",
}
assert tuple(STANDING_TYPES) == STANDING_FIELDS, "a Standing field needs its type here"
# PostgreSQL types of a history row's columns that vary by player, for the statements that write them.
CHANGE_TYPES = {
    "player_id": "int8",
    "rating_before": "float8",
    "rd_before": "float8",
    "volatility_before": "float8",
    "rd_as_of_before": "timestamptz",
    "rd_at_event": "float8",
    "rating_after": "float8",
    "rd_after": "float8",
    "volatility_after": "float8",
    "rd_as_of_after": "timestamptz",
    "expected": "float8",
    "score": "float8",
    "delta": "float8",
}
assert tuple(CHANGE_TYPES) == CHANGE_COLUMNS, "a history column needs its type here"

_CHANGE = RatingChange._meta.db_table
_SUPERSEDED = SupersededChange._meta.db_table
_RATING = PlayerRating._meta.db_table
_JOB = ReplayJob._meta.db_table

# --- The replay: moving the replaced history aside ---------------------------------------

HISTORY_COLUMNS = ", ".join(
    ["id", "event_id", "ladder_id", "player_id", "match_id"] + [field.column for field in ChangeValues._meta.fields]
)
# PostgreSQL: one statement deletes the rows and inserts what the delete returns.
SUPERSEDE_SQL = f"""
    WITH moved AS (
        DELETE FROM {_CHANGE} WHERE ladder_id = %(ladder)s AND event_id >= %(first)s
        RETURNING {HISTORY_COLUMNS}
    )
    INSERT INTO {_SUPERSEDED} ({HISTORY_COLUMNS}, superseded_at)
    SELECT {HISTORY_COLUMNS}, %(now)s FROM moved
"""
# The twin, for any database: copy the rows, then delete them (in the same transaction).
COPY_REPLACED_SQL = f"""
    INSERT INTO {_SUPERSEDED} ({HISTORY_COLUMNS}, superseded_at)
    SELECT {HISTORY_COLUMNS}, %(now)s FROM {_CHANGE}
    WHERE ladder_id = %(ladder)s AND event_id >= %(first)s
"""
DELETE_REPLACED_SQL = f"DELETE FROM {_CHANGE} WHERE ladder_id = %(ladder)s AND event_id >= %(first)s"

# --- The replay: where each player starts ------------------------------------------------

# Each member's standing before their first history row from event ``first`` on.
STARTS_SQL = f"""
    SELECT r.player_id, c.rating_before, c.rd_before, c.volatility_before, c.rd_as_of_before
    FROM {_RATING} AS r
    CROSS JOIN LATERAL (
        SELECT rating_before, rd_before, volatility_before, rd_as_of_before
        FROM {_CHANGE} AS h
        WHERE h.ladder_id = r.ladder_id AND h.player_id = r.player_id AND h.event_id >= %(first)s
        ORDER BY h.event_id
        LIMIT 1
    ) AS c
    WHERE r.ladder_id = %(ladder)s
"""


def starting_rows(ladder_id: int, first: int) -> list[tuple[Any, ...]]:
    """``(player, rating, rd, volatility, rd_as_of)`` of ``STARTS_SQL``."""
    with connection.cursor() as cursor:
        cursor.execute(STARTS_SQL, {"first": first, "ladder": ladder_id})
        return cursor.fetchall()


def fetch_raw(queryset: QuerySet[Any], chunk: int = 20_000) -> Iterator[tuple[Any, ...]]:
    """The rows of a ``values_list`` query through a server-side cursor with psycopg's own loaders.

    Django's time-zone-aware timestamp loader parses in Python (about 7 µs a value, 14 s
    for the 2M participant rows of 1M matches); psycopg's C loader gives the same instants
    in UTC, which is the connection's time zone. The query has no other value converters.
    """
    sql, params = queryset.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        cursor.execute(sql, params)
        while batch := cursor.fetchmany(chunk):
            yield from batch


# --- The replay: new history rows ---------------------------------------------------------

# A history row as the replay's COPY sends it: the player's values, the event's, then the
# ones every row of a replay shares.
EVENT_COLUMNS = ("event_id", "match_id", "engine", "engine_params")
SHARED_COLUMNS = ("ladder_id", "kind", "created_at")
COPY_COLUMNS = CHANGE_COLUMNS + EVENT_COLUMNS + SHARED_COLUMNS
# PostgreSQL types of ``COPY_COLUMNS``, for the binary COPY.
COPY_TYPES = [*CHANGE_TYPES.values(), "int8", "int8", "varchar", "jsonb", "int8", "varchar", "timestamptz"]
COPY_CHANGES_SQL = f"COPY {_CHANGE} ({', '.join(COPY_COLUMNS)}) FROM STDIN (FORMAT BINARY)"


class ChangeCopy:
    """Appends a replay's history rows through a binary ``COPY``, open for each ``with`` block.

    psycopg's C dumpers write binary rows about six times faster than Python formats the
    same rows as text. The rows go to the server while the replay computes the next ones,
    so PostgreSQL stores and indexes them on another core meanwhile. The ``COPY`` ends
    with the block, because the connection cannot fetch the next part of the log while
    it is open. (``ratings.store.ChangeBatches`` is the twin.)
    """

    def __init__(self, *, ladder_id: int, kind: str, created_at: datetime) -> None:
        self.count = 0
        self._shared = (ladder_id, kind, created_at)
        self._json: dict[str, Jsonb] = {}  # JSON text -> its jsonb adapter, made once per text
        self._stack: contextlib.ExitStack | None = None
        self._copy: Any = None

    def __enter__(self) -> ChangeCopy:
        with contextlib.ExitStack() as stack:
            cursor = stack.enter_context(connection.cursor())
            self._copy = stack.enter_context(cursor.cursor.copy(COPY_CHANGES_SQL))
            self._copy.set_types(COPY_TYPES)
            self._stack = stack.pop_all()
        return self

    def write(self, event_id: int, match_id: int | None, engine: str, params: str, rows: Sequence[ChangeRow]) -> None:
        """The history ``rows`` of one event; ``params`` is ``engine_params`` as JSON text."""
        self.count += len(rows)
        adapted = self._json.get(params)
        if adapted is None:
            adapted = self._json[params] = Jsonb(params, dumps=str)
        event = (event_id, match_id, engine, adapted, *self._shared)
        write_row = self._copy.write_row
        for row in rows:
            write_row(row + event)

    def __exit__(self, *exc: Any) -> None:
        if self._stack is not None:
            stack, self._stack, self._copy = self._stack, None, None
            stack.__exit__(*exc)


# --- The replay: final standings -----------------------------------------------------------

CREATE_STANDINGS_SQL = (
    "CREATE TEMP TABLE replay_standing (player_id bigint PRIMARY KEY, "
    f"{', '.join(f'{field} {kind}' for field, kind in STANDING_TYPES.items())}) ON COMMIT DROP"
)
COPY_STANDINGS_SQL = f"COPY replay_standing (player_id, {', '.join(STANDING_FIELDS)}) FROM STDIN"
UPDATE_STANDINGS_SQL = (
    f"UPDATE {_RATING} AS r SET {', '.join(f'{field} = s.{field}' for field in STANDING_FIELDS)} "
    "FROM replay_standing AS s WHERE r.ladder_id = %s AND r.player_id = s.player_id"
)


def store_standings(ladder_id: int, standings: dict[int, Standing]) -> None:
    """Write a replay's final standings: a temp table filled by ``COPY``, then one ``UPDATE … FROM``."""
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS replay_standing")
        cursor.execute(CREATE_STANDINGS_SQL)
        with cursor.cursor.copy(COPY_STANDINGS_SQL) as copy:
            for player, standing in standings.items():
                copy.write_row((player, *(getattr(standing, field) for field in STANDING_FIELDS)))
        cursor.execute(UPDATE_STANDINGS_SQL, [ladder_id])
        cursor.execute("DROP TABLE replay_standing")


# --- The rating store: a live update's new standings ---------------------------------------

_STORE_ROW = f"(%s::bigint, {', '.join(f'%s::{kind}' for kind in STANDING_TYPES.values())})"
_STORE_SQL = (
    f"UPDATE {_RATING} AS r SET {', '.join(f'{field} = v.{field}' for field in STANDING_FIELDS)} "
    f"FROM (VALUES {{rows}}) AS v(id, {', '.join(STANDING_FIELDS)}) WHERE r.id = v.id"
)


def store_ratings(rows: Sequence[PlayerRating]) -> None:
    """Write the standing fields of rating ``rows`` (set on them already) in one ``UPDATE … FROM (VALUES …)``.

    ``bulk_update`` builds a CASE expression per field and row, which costs more Python
    time than the whole rating arithmetic of a game.
    """
    params: list[Any] = []
    for row in rows:
        params.append(row.pk)
        params.extend(getattr(row, field) for field in STANDING_FIELDS)
    with connection.cursor() as cursor:
        cursor.execute(_STORE_SQL.format(rows=", ".join([_STORE_ROW] * len(rows))), params)


# --- Replay jobs ---------------------------------------------------------------------------

# pg_advisory_xact_lock(REPLAY_LOCK, ladder id): one replay run per ladder at a time.
REPLAY_LOCK = 0x52504C59  # "RPLY"
JOB_LOCK_SQL = "SELECT pg_advisory_xact_lock(%s::int4, %s::int4)"
JOB_TRY_LOCK_SQL = "SELECT pg_try_advisory_xact_lock(%s::int4, %s::int4)"
JOB_START_SQL = f"""
    UPDATE {_JOB} SET status = %(running)s, started_at = COALESCE(started_at, %(now)s), heartbeat_at = %(now)s,
        error = ''
    WHERE id = ANY(%(ids)s) AND status <> %(done)s
"""
JOB_PROGRESS_SQL = f"""
    UPDATE {_JOB} SET events_done = %(done)s, events_total = %(total)s, heartbeat_at = statement_timestamp()
    WHERE id = ANY(%(ids)s)
"""


def lock_ladder_replays(ladder_id: int) -> None:
    """Wait for any other replay run of the ladder to finish; held until the transaction ends."""
    with connection.cursor() as cursor:
        cursor.execute(JOB_LOCK_SQL, [REPLAY_LOCK, ladder_id])


def ladder_replays_idle(ladder_id: int) -> bool:
    """Whether no replay run of the ladder holds its lock (a run's lock dies with its
    connection, so a killed worker's is free). If so, the lock is now held until the
    caller's transaction ends, so no run starts meanwhile."""
    with connection.cursor() as cursor:
        cursor.execute(JOB_TRY_LOCK_SQL, [REPLAY_LOCK, ladder_id])
        return bool(cursor.fetchone()[0])


# --- The settings timeline ----------------------------------------------------------------

# Runs of match events rated with the same settings: (engine, params, first event, last event).
SETTINGS_RUNS_SQL = f"""
    SELECT engine, engine_params::text, MIN(event_id), MAX(event_id)
    FROM {_CHANGE}
    WHERE ladder_id = %s AND match_id IS NOT NULL
    GROUP BY engine, engine_params
"""
# Each match event's settings, for a history whose runs overlap.
SETTINGS_EVENTS_SQL = f"""
    SELECT DISTINCT ON (event_id) event_id, engine, engine_params::text
    FROM {_CHANGE}
    WHERE ladder_id = %s AND match_id IS NOT NULL
    ORDER BY event_id
"""


def fetch_all(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
