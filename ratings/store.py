"""The ratings app's seam to the database: each statement in its PostgreSQL and its ORM form.

Each function here is one statement (or one short run of them) and chooses, in one place,
between its hand-written SQL (``ratings.sql``, or built here; PostgreSQL) and its ORM twin
(other databases: ``make run``'s SQLite), through ``core.db.on_postgresql()``; callers
(the replay, the replay jobs, the rating store, the settings timeline, the season reset,
the RD write-backs) never ask which database they are on. The tests run both sides
(``core.db.orm_twins()`` makes PostgreSQL take the twins; ``tests/ratings/test_sql_twins.py``).

Where a statement holds SQL that another module writes (an engine's RD growth, from
``ratings.nightly``), the caller passes it in as a function, called on PostgreSQL only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import QuerySet

from core import db
from ladder.models import Ladder
from ratings import sql
from ratings.history import (
    STANDING_FIELDS,
    ChangeRow,
    Standing,
    adjustment_change,
    change_values,
    reset_params,
    reset_standing,
)
from ratings.models import ChangeKind, PlayerRating, RatingChange, RatingEvent, RatingReset

# A piece of SQL and its parameters.
SqlPart = tuple[str, dict[str, Any]]

_RATING = PlayerRating._meta.db_table
_CHANGE = RatingChange._meta.db_table

# --- The replay ----------------------------------------------------------------------------


def participant_rows(query: QuerySet[Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of the replay's ``values_list`` of participants, streamed: psycopg's own loaders
    through a server-side cursor on PostgreSQL (``ratings.sql.fetch_raw``), the ORM's iterator elsewhere."""
    return sql.fetch_raw(query) if db.on_postgresql() else query.iterator(chunk_size=20_000)


def history_supersede(ladder: Ladder, first: int, *, now: datetime) -> None:
    """Move the ladder's history rows from event ``first`` on to ``SupersededChange``, unchanged.

    On PostgreSQL one statement deletes them and inserts what the delete returns; elsewhere
    the rows are copied, then deleted (the same transaction either way).
    """
    params: dict[str, Any] = {"ladder": ladder.pk, "first": first, "now": now}
    with connection.cursor() as cursor:
        if db.on_postgresql():
            cursor.execute(sql.SUPERSEDE_SQL, params)
        else:
            cursor.execute(sql.COPY_REPLACED_SQL, params)
            cursor.execute(sql.DELETE_REPLACED_SQL, params)


def starting_rows(ladder: Ladder, first: int) -> list[tuple[Any, ...]]:
    """``(player, rating, rd, volatility, rd_as_of)`` before each player's first history row from
    event ``first`` on (``ratings.sql.STARTS_SQL``)."""
    if db.on_postgresql():
        rows = sql.starting_rows(ladder.pk, first)
    else:
        seen: dict[int, tuple[Any, ...]] = {}
        history = RatingChange.objects.filter(ladder=ladder, event_id__gte=first).order_by("player_id", "event_id")
        for row in history.values_list(
            "player_id", "rating_before", "rd_before", "volatility_before", "rd_as_of_before"
        ):
            seen.setdefault(row[0], row)
        rows = list(seen.values())
    return rows


def latest_changes(earlier: QuerySet[RatingChange]) -> Iterable[RatingChange]:
    """Each player's latest row of the history rows ``earlier``."""
    latest: Iterable[RatingChange]
    if db.on_postgresql():
        latest = earlier.order_by("player_id", "-event_id").distinct("player_id")
    else:
        by_player: dict[int, RatingChange] = {}
        for change in earlier.order_by("event_id"):
            by_player[change.player_id] = change
        latest = list(by_player.values())
    return latest


def change_writer(*, ladder_id: int, kind: str, created_at: datetime) -> sql.ChangeCopy | ChangeBatches:
    """The replay's binary ``COPY`` on PostgreSQL (``ratings.sql.ChangeCopy``), batches of ``bulk_create`` elsewhere."""
    if db.on_postgresql():
        return sql.ChangeCopy(ladder_id=ladder_id, kind=kind, created_at=created_at)
    return ChangeBatches(ladder_id=ladder_id, kind=kind, created_at=created_at)


class ChangeBatches:
    """The ORM twin of ``ratings.sql.ChangeCopy``: history rows in ``bulk_create`` batches."""

    CHUNK = 2_000  # rows per bulk_create

    def __init__(self, *, ladder_id: int, kind: str, created_at: datetime) -> None:
        self.count = 0
        self._shared = {"ladder_id": ladder_id, "kind": kind, "created_at": created_at}
        self._rows: list[RatingChange] = []

    def __enter__(self) -> ChangeBatches:
        return self

    def write(self, event_id: int, match_id: int | None, engine: str, params: str, rows: Sequence[ChangeRow]) -> None:
        self.count += len(rows)
        for row in rows:
            self._rows.append(
                RatingChange(
                    event_id=event_id,
                    match_id=match_id,
                    engine=engine,
                    engine_params=json.loads(params),
                    **self._shared,
                    **change_values(row),
                )
            )
        if len(self._rows) >= self.CHUNK:
            self._send()

    def _send(self) -> None:
        RatingChange.objects.bulk_create(self._rows)
        self._rows = []

    def __exit__(self, *exc: Any) -> None:
        try:
            if exc[0] is None and self._rows:
                self._send()
        finally:
            self._rows = []


def standings_store(ladder: Ladder, standings: dict[int, Standing]) -> None:
    """Write final standings: a temp table and one ``UPDATE … FROM`` on PostgreSQL, ``bulk_update`` elsewhere."""
    if not standings:
        return
    if db.on_postgresql():
        sql.store_standings(ladder.pk, standings)
        return
    rows = list(PlayerRating.objects.filter(ladder=ladder, player_id__in=list(standings)))
    for row in rows:
        standing = standings[row.player_id]
        for field in STANDING_FIELDS:
            setattr(row, field, getattr(standing, field))
    PlayerRating.objects.bulk_update(rows, STANDING_FIELDS, batch_size=500)


# --- Replay jobs ---------------------------------------------------------------------------


def ladder_replays_lock(ladder_id: int) -> None:
    """Wait for any other replay run of the ladder to finish; held until the transaction ends.

    PostgreSQL's advisory lock (``ratings.sql.lock_ladder_replays``); other databases have
    one writer at a time, so a run holds the whole database already."""
    if db.on_postgresql():
        sql.lock_ladder_replays(ladder_id)


def ladder_replays_idle(ladder_id: int) -> bool:
    """Whether no replay run of the ladder holds its lock (``ratings.sql.ladder_replays_idle``;
    if so, it is now held until the caller's transaction ends). Always on other databases,
    which have no such lock."""
    return not db.on_postgresql() or sql.ladder_replays_idle(ladder_id)


def progress_connection() -> BaseDatabaseWrapper | None:
    """A connection of its own for a replay's progress reports, on PostgreSQL only: on other
    databases a second writer would wait for the replay's lock (None: no reports)."""
    if db.on_postgresql():
        return connections.create_connection(DEFAULT_DB_ALIAS)
    return None


# --- The rating store: a live update's new standings ---------------------------------------


def ratings_store(rows: list[PlayerRating]) -> None:
    """Write the standing fields of locked rating ``rows`` (set on them already):
    ``ratings.sql.store_ratings`` on PostgreSQL, ``bulk_update`` elsewhere."""
    if db.on_postgresql():
        sql.store_ratings(rows)
    else:
        PlayerRating.objects.bulk_update(rows, STANDING_FIELDS)


# --- The settings timeline -----------------------------------------------------------------


def settings_stretches(ladder_id: int) -> list[tuple[str, Any, int, int]] | None:
    """``(engine, engine_params, first event, last event)`` of each distinct settings the ladder's
    match events were rated with, in one statement on PostgreSQL (``ratings.sql.SETTINGS_RUNS_SQL``).
    None on other databases, which read ``settings_by_event`` instead."""
    if db.on_postgresql():
        return sql.fetch_all(sql.SETTINGS_RUNS_SQL, [ladder_id])
    return None


def settings_by_event(ladder_id: int) -> list[tuple[int, str, Any]]:
    """``(event, engine, engine_params)`` of each of the ladder's match events, in event order."""
    if db.on_postgresql():
        return sql.fetch_all(sql.SETTINGS_EVENTS_SQL, [ladder_id])
    seen: dict[int, tuple[int, str, Any]] = {}
    history = RatingChange.objects.filter(ladder_id=ladder_id, match__isnull=False).order_by("event_id")
    for event_id, name, params in history.values_list("event_id", "engine", "engine_params"):
        seen.setdefault(event_id, (event_id, name, params))
    return list(seen.values())


# --- A season's reset ----------------------------------------------------------------------


def reset_lock(ladder: Ladder, at: datetime) -> list[PlayerRating]:
    """Lock the rating rows a reset at ``at`` applies to, in primary-key order; the ORM twin
    also returns them (``reset_apply`` takes them), PostgreSQL's statement reads them again."""
    rows: list[PlayerRating] = []
    if db.on_postgresql():
        _reset_lock_sql(ladder, at)
    else:
        locked = PlayerRating.objects.select_for_update().filter(ladder=ladder, joined_at__lte=at)
        rows = list(locked.order_by("pk"))
    return rows


def reset_apply(
    ladder: Ladder,
    reset: RatingReset,
    event: RatingEvent,
    rows: list[PlayerRating],
    now: datetime,
    *,
    rd_at: Callable[[], SqlPart],
) -> int:
    """Apply ``reset`` (event ``event``) to the rows ``reset_lock`` locked; ``rd_at`` gives the SQL of
    each row's RD at the reset (``ratings.nightly.rd_at_sql``). How many ratings were reset."""
    if db.on_postgresql():
        return _reset_apply_sql(ladder, reset, event, now, rd_at)
    return _reset_apply_orm(ladder, reset, event, rows, now)


def _reset_lock_sql(ladder: Ladder, at: datetime) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT id FROM {_RATING} WHERE ladder_id = %s AND joined_at <= %s"
            " ORDER BY id FOR NO KEY UPDATE) AS locked",
            [ladder.pk, at],
        )


def _reset_apply_sql(
    ladder: Ladder, reset: RatingReset, event: RatingEvent, now: datetime, rd_at: Callable[[], SqlPart]
) -> int:
    """One statement: the new values computed once per row, an ``UPDATE … FROM`` of the ratings
    and an ``INSERT … SELECT`` of the history rows from them.

    ``rd_at`` (``ratings.nightly.rd_at_sql``) is the engine's ``rd_at`` operation for operation, and the rating's
    arithmetic is ``reset_standing``'s, so both give the Python twin's floats. Every part of
    the statement reads the same snapshot, so the history rows keep the values before.
    """
    rd, params = rd_at()
    floor = "NULL::float8" if reset.rd_reset is None else "%(rd_reset)s"
    statement = f"""
        WITH g AS MATERIALIZED (
            SELECT r.id, r.player_id, r.rating, r.rd, r.volatility, r.rd_as_of, m.rd_at,
                %(center)s + %(factor)s * (r.rating - %(center)s) AS new_rating
            FROM {_RATING} AS r
            CROSS JOIN LATERAL (SELECT {rd} AS rd_at) AS m
            WHERE r.ladder_id = %(ladder)s AND r.joined_at <= %(at_ts)s
        ), moved AS (
            UPDATE {_RATING} AS r
            SET rating = g.new_rating, rd = GREATEST(g.rd_at, {floor}), rd_as_of = GREATEST(g.rd_as_of, %(at_ts)s)
            FROM g
            WHERE r.id = g.id
        )
        INSERT INTO {_CHANGE} (event_id, ladder_id, player_id, match_id, kind, engine, engine_params, created_at,
            rating_before, rd_before, volatility_before, rd_as_of_before, rd_at_event,
            rating_after, rd_after, volatility_after, rd_as_of_after, expected, score, delta)
        SELECT %(event)s, %(ladder)s, g.player_id, NULL, %(kind)s, %(engine)s, %(engine_params)s::jsonb, %(now)s,
            g.rating, g.rd, g.volatility, g.rd_as_of, g.rd_at,
            g.new_rating, GREATEST(g.rd_at, {floor}), g.volatility, GREATEST(g.rd_as_of, %(at_ts)s), NULL, NULL,
            g.new_rating - g.rating
        FROM g
    """
    values = {
        **params,
        "event": event.pk,
        "ladder": ladder.pk,
        "kind": ChangeKind.SEASON.value,
        "engine": ladder.engine,
        "engine_params": json.dumps(reset_params(reset)),
        "now": now,
        "center": reset.center,
        "factor": reset.factor,
        "rd_reset": reset.rd_reset,
    }
    with connection.cursor() as cursor:
        cursor.execute(statement, values)
        return cursor.rowcount


def _reset_apply_orm(
    ladder: Ladder, reset: RatingReset, event: RatingEvent, rows: list[PlayerRating], now: datetime
) -> int:
    """The ORM twin of ``_reset_apply_sql``: ``reset_standing`` row by row, then ``bulk_create`` and ``bulk_update``."""
    engine = ladder.get_engine()
    changes = []
    for row in rows:
        old = Standing.of(row)
        rd_at_event, new = reset_standing(old, reset, engine)
        changes.append(
            RatingChange(
                event=event,
                ladder_id=ladder.pk,
                kind=ChangeKind.SEASON,
                engine=ladder.engine,
                engine_params=reset_params(reset),
                created_at=now,
                **change_values(adjustment_change(row.player_id, old, new, rd_at_event)),
            )
        )
        row.rating, row.rd, row.rd_as_of = new.rating, new.rd, new.rd_as_of
    RatingChange.objects.bulk_create(changes, batch_size=2_000)
    PlayerRating.objects.bulk_update(rows, ["rating", "rd", "rd_as_of"], batch_size=500)
    return len(rows)


# --- RD write-backs ------------------------------------------------------------------------


def rds_write_back(*, ladder: Ladder, at: datetime, grown_rd: Callable[[], SqlPart]) -> int:
    """Write ``RD(at)`` back with ``rd_as_of = at`` for every rating of ``ladder`` behind ``at``
    (``ratings.nightly.ratings_materialise``); ``grown_rd`` gives the SQL of rating row ``r``'s
    grown RD and its parameters. How many ratings were written."""
    if not db.on_postgresql():
        return _materialise_in_python(ladder, at)
    table = PlayerRating._meta.db_table
    grown, params = grown_rd()
    sql = f"""
        WITH locked AS (
            SELECT id FROM {table}
            WHERE ladder_id = %(ladder)s AND rd_as_of < %(at_ts)s
            ORDER BY id
            FOR NO KEY UPDATE
        )
        UPDATE {table} AS r
        SET rd = {grown}, rd_as_of = %(at_ts)s
        FROM locked
        WHERE r.id = locked.id
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {**params, "ladder": ladder.pk, "at_ts": at, "at": at.timestamp(), "rd_max": ladder.rd_max})
        return cursor.rowcount


def _materialise_in_python(ladder: Ladder, at: datetime) -> int:
    """The ORM twin (SQLite, one writer at a time): ``Engine.materialize``, row by row."""
    engine = ladder.get_engine()
    rows = list(PlayerRating.objects.filter(ladder=ladder, rd_as_of__lt=at).order_by("pk"))
    for row in rows:
        row.rd = engine.materialize(row.state(), at.timestamp()).rd
        row.rd_as_of = at
    PlayerRating.objects.bulk_update(rows, ["rd", "rd_as_of"], batch_size=500)
    return len(rows)
