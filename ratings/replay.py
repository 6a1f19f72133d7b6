"""Replaying a ladder's rating log: the whole history, or from the first affected event.

Built for ladders with millions of matches: the log is streamed from the database in
event order (one query for the matches' players, one for adjustments), the arithmetic is
``ratings.history`` (the same as the live updates), new history rows stream into
PostgreSQL with ``COPY`` (batched ``bulk_create`` elsewhere), and the final standings go
back through a temporary table in one ``UPDATE``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone
from psycopg.types.datetime import TimestamptzLoader
from psycopg.types.json import Jsonb

from ladder.models import Ladder, Participant
from ratings.history import Standing, apply_adjustment, apply_match, initial_standing
from ratings.models import (
    ChangeKind,
    ChangeValues,
    EventKind,
    PlayerRating,
    RatingAdjustment,
    RatingChange,
    RatingEvent,
    SupersededChange,
)
from ratings.settings_timeline import SettingsTimeline, ladder_with

# A history row as the replay writes it: the columns that vary from row to row, then the
# ones every row of a replay shares (``_ChangeWriter`` formats those once).
ROW_COLUMNS = (
    "event_id",
    "player_id",
    "match_id",
    "rating_before",
    "rd_before",
    "volatility_before",
    "rd_as_of_before",
    "rd_at_event",
    "rating_after",
    "rd_after",
    "volatility_after",
    "rd_as_of_after",
    "expected",
    "score",
    "delta",
    "engine",
    "engine_params",
)
SHARED_COLUMNS = ("ladder_id", "kind", "created_at")
# PostgreSQL types of ``ROW_COLUMNS + SHARED_COLUMNS``, for the binary COPY.
COPY_TYPES = (
    ["int8", "int8", "int8"]
    + ["float8"] * 3
    + ["timestamptz", "float8"]
    + ["float8"] * 3
    + ["timestamptz"]
    + ["float8"] * 3
    + ["varchar", "jsonb", "int8", "varchar", "timestamptz"]
)
EVENTS_PER_BATCH = 50_000
STANDING_COLUMNS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")


@dataclass(frozen=True, slots=True)
class ReplayStats:
    events: int
    matches: int
    adjustments: int
    players: int
    changes: int


@dataclass(slots=True)
class _Event:
    id: int
    kind: str
    at: datetime
    match_id: int | None = None
    layout: list[list[int]] = dataclasses.field(default_factory=list)
    placements: list[int] = dataclasses.field(default_factory=list)
    adjustment: RatingAdjustment | None = None


def ladder_replay(
    *,
    ladder: Ladder,
    from_event_id: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    settings: dict[str, Any] | None = None,
) -> ReplayStats:
    """Recompute every rating event of ``ladder`` from ``from_event_id`` on (all, by default).

    Every rating row of the ladder is locked first, so no live update interleaves (a live
    update waiting on those locks numbers its event after the replay). History rows of the
    replayed events move unchanged to ``SupersededChange`` and new ``replay`` rows are
    written; voided events are skipped.

    Each event is rated with the settings it was rated with live, and each player starts
    from where the history says they started (``ratings.settings_timeline``), so a replay
    after the ladder's settings changed still reproduces the live ratings. With
    ``settings`` (every rating setting, as ``RatingSettingsChange.new_values``) the whole
    history is re-rated under those instead, from every member's initial values:
    ``ladder.services.rating_settings`` does that for a moderator, under a record.
    """
    if settings is not None and from_event_id is not None:
        raise ValueError("a re-rate under new settings replays the whole history; from_event_id must be None")
    with transaction.atomic():
        members = list(
            PlayerRating.objects.select_for_update()
            .filter(ladder=ladder)
            .order_by("pk")
            .values_list("pk", "player_id", "joined_at", "rating", "rd", "volatility", "rd_as_of")
        )
        events = RatingEvent.objects.filter(ladder=ladder, is_active=True)
        if from_event_id is not None:
            events = events.filter(pk__gte=from_event_id)
        total = events.count()
        first = (
            from_event_id if from_event_id is not None else events.order_by("pk").values_list("pk", flat=True).first()
        )
        full = from_event_id is None
        timeline = SettingsTimeline.of(ladder, override=settings)
        if settings is not None:
            fresh = ladder_with(ladder, settings)
            standings = {member[1]: initial_standing(fresh, member[2]) for member in members}
        else:
            standings = _starting_standings(ladder, first, members)
        if not full:
            _load_standings_before(ladder, first, standings)
        touched: set[int] = set(standings) if full else set()
        if first is not None:
            if not full:
                replaced = RatingChange.objects.filter(ladder=ladder, event_id__gte=first)
                touched.update(replaced.values_list("player_id", flat=True).distinct())
            _supersede(ladder, first, now=timezone.now())
        writer = _ChangeWriter(ladder_id=ladder.pk, kind=ChangeKind.REPLAY.value, created_at=timezone.now())
        counts = _rate_log(
            ladder=ladder,
            first=first,
            standings=standings,
            timeline=timeline,
            writer=writer,
            touched=touched,
            full=full,
            total=total,
            progress=progress,
        )
        _store_standings(ladder, {player: standings[player] for player in touched})
        return ReplayStats(
            events=total,
            matches=counts["matches"],
            adjustments=counts["adjustments"],
            players=len(touched),
            changes=counts["changes"],
        )


def _rate_log(
    *,
    ladder: Ladder,
    first: int | None,
    standings: dict[int, Standing],
    timeline: SettingsTimeline,
    writer: _ChangeWriter | _NoWriter,
    touched: set[int],
    full: bool,
    total: int,
    progress: Callable[[int, int], None] | None,
) -> dict[str, int]:
    """Apply the active events from ``first`` on to ``standings`` (in place), writing history rows to ``writer``.

    Ends with the RD write-backs after the last event for every ``touched`` player.
    Returns the numbers of matches, adjustments and history rows.
    """
    nights = timeline  # RDs written back at midnights and at settings changes, between events
    counts = {"matches": 0, "adjustments": 0, "changes": 0}
    stream = _stream(ladder, first)
    index = 0
    # The log is read a batch at a time between COPYs: a connection cannot fetch while a COPY is open.
    while batch := list(itertools.islice(stream, EVENTS_PER_BATCH)):
        with writer:
            for event in batch:
                index += 1
                if nights:
                    players = [p for side in event.layout for p in side] or [event.adjustment.player_id]
                    nights.materialise(standings, players, before_event=event.id)
                if event.kind == EventKind.MATCH:
                    rated = timeline.for_match(event.id)
                    result, after = apply_match(
                        engine=rated.engine,
                        layout=event.layout,
                        placements=event.placements,
                        played_at=event.at,
                        standings=standings,
                    )
                    for side_players, side_results in zip(event.layout, result.sides, strict=True):
                        for player, outcome in zip(side_players, side_results, strict=True):
                            old, new = standings[player], after[player]
                            writer.write(
                                (
                                    event.id,
                                    player,
                                    event.match_id,
                                    old.rating,
                                    old.rd,
                                    old.volatility,
                                    old.rd_as_of,
                                    outcome.rd_at_game,
                                    new.rating,
                                    new.rd,
                                    new.volatility,
                                    new.rd_as_of,
                                    outcome.expected,
                                    outcome.score,
                                    outcome.delta,
                                    rated.name,
                                    rated.json,
                                )
                            )
                    standings.update(after)
                    if not full:
                        touched.update(after)
                    counts["matches"] += 1
                else:
                    adjustment = event.adjustment
                    rated = timeline.for_adjustment(event.id)
                    old = standings[adjustment.player_id]
                    new = apply_adjustment(adjustment, old)
                    writer.write(
                        (
                            event.id,
                            adjustment.player_id,
                            None,
                            old.rating,
                            old.rd,
                            old.volatility,
                            old.rd_as_of,
                            rated.engine.rd_at(old.state(), event.at.timestamp()),
                            new.rating,
                            new.rd,
                            new.volatility,
                            new.rd_as_of,
                            None,
                            None,
                            new.rating - old.rating,
                            rated.name,
                            json.dumps({"reason": adjustment.reason}),
                        )
                    )
                    standings[adjustment.player_id] = new
                    touched.add(adjustment.player_id)
                    counts["adjustments"] += 1
                if progress is not None and (index % 10_000 == 0 or index == total):
                    progress(index, total)

    counts["changes"] = writer.count
    if progress is not None and total == 0:
        progress(0, 0)
    if nights:
        nights.materialise(standings, touched)
    return counts


def ladder_rerate_preview(*, ladder: Ladder, settings: dict[str, Any]) -> dict[int, Standing]:
    """Every member's standing if the whole history were re-rated under ``settings``; writes nothing.

    The same computation as ``ladder_replay(settings=...)``, in memory: nothing is locked
    or written, so live ratings go on meanwhile (the preview is of the log as read).
    """
    with transaction.atomic():
        members = list(
            PlayerRating.objects.filter(ladder=ladder)
            .order_by("pk")
            .values_list("pk", "player_id", "joined_at", "rating", "rd", "volatility", "rd_as_of")
        )
        events = RatingEvent.objects.filter(ladder=ladder, is_active=True)
        first = events.order_by("pk").values_list("pk", flat=True).first()
        fresh = ladder_with(ladder, settings)
        standings = {member[1]: initial_standing(fresh, member[2]) for member in members}
        _rate_log(
            ladder=ladder,
            first=first,
            standings=standings,
            timeline=SettingsTimeline.of(ladder, override=settings),
            writer=_NoWriter(),
            touched=set(standings),
            full=True,
            total=0,
            progress=None,
        )
    return standings


class _NoWriter:
    """A ``_ChangeWriter`` that keeps nothing, for previews."""

    count = 0

    def __enter__(self) -> _NoWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def write(self, row: tuple[Any, ...]) -> None:
        return None


def _stream(ladder: Ladder, first: int | None) -> Iterator[_Event]:
    """Active events from ``first`` on, in id order, each with its match's sides or its adjustment."""
    if first is None:
        return
    adjustments = {
        event.pk: event
        for event in RatingEvent.objects.filter(
            ladder=ladder, is_active=True, kind=EventKind.ADJUSTMENT, pk__gte=first
        ).select_related("adjustment")
    }
    pending = sorted(adjustments)
    rows = (
        Participant.objects.filter(
            match__rating_event__ladder=ladder,
            match__rating_event__is_active=True,
            match__rating_event__id__gte=first,
        )
        .order_by("match__rating_event__id", "side__index", "id")
        .values_list(
            "match__rating_event__id", "match_id", "match__played_at", "side__index", "side__placement", "player_id"
        )
    )
    rows = _fetch_raw(rows) if connection.vendor == "postgresql" else rows.iterator(chunk_size=20_000)
    current: _Event | None = None
    for event_id, match_id, played_at, side_index, placement, player_id in rows:
        if current is None or current.id != event_id:
            if current is not None:
                yield current
            while pending and pending[0] < event_id:
                yield _adjustment_event(adjustments[pending.pop(0)])
            current = _Event(id=event_id, kind=EventKind.MATCH, at=played_at, match_id=match_id)
        if side_index == len(current.layout):
            current.layout.append([])
            current.placements.append(placement)
        current.layout[side_index].append(player_id)
    if current is not None:
        yield current
    for event_id in pending:
        yield _adjustment_event(adjustments[event_id])


def _fetch_raw(queryset: QuerySet[Any], chunk: int = 20_000) -> Iterator[tuple[Any, ...]]:
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


_HISTORY_COLUMNS = ", ".join(
    ["id", "event_id", "ladder_id", "player_id", "match_id"] + [field.column for field in ChangeValues._meta.fields]
)
_MOVE_SQL = f"""
    WITH moved AS (
        DELETE FROM {RatingChange._meta.db_table} WHERE ladder_id = %(ladder)s AND event_id >= %(first)s
        RETURNING {_HISTORY_COLUMNS}
    )
    INSERT INTO {SupersededChange._meta.db_table} ({_HISTORY_COLUMNS}, superseded_at)
    SELECT {_HISTORY_COLUMNS}, %(now)s FROM moved
"""
_COPY_SQL = f"""
    INSERT INTO {SupersededChange._meta.db_table} ({_HISTORY_COLUMNS}, superseded_at)
    SELECT {_HISTORY_COLUMNS}, %(now)s FROM {RatingChange._meta.db_table}
    WHERE ladder_id = %(ladder)s AND event_id >= %(first)s
"""


def _supersede(ladder: Ladder, first: int, *, now: datetime) -> None:
    """Move the ladder's history rows from event ``first`` on to ``SupersededChange``, unchanged.

    On PostgreSQL one statement deletes them and inserts what the delete returns; elsewhere
    the rows are copied, then deleted (the same transaction either way).
    """
    params = {"ladder": ladder.pk, "first": first, "now": now}
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(_MOVE_SQL, params)
        else:
            cursor.execute(_COPY_SQL, params)
            cursor.execute(
                f"DELETE FROM {RatingChange._meta.db_table} WHERE ladder_id = %(ladder)s AND event_id >= %(first)s",
                params,
            )


def _adjustment_event(event: RatingEvent) -> _Event:
    return _Event(id=event.pk, kind=EventKind.ADJUSTMENT, at=event.at, adjustment=event.adjustment)


_STARTS_SQL = f"""
    SELECT r.player_id, c.rating_before, c.rd_before, c.volatility_before, c.rd_as_of_before
    FROM {PlayerRating._meta.db_table} AS r
    CROSS JOIN LATERAL (
        SELECT rating_before, rd_before, volatility_before, rd_as_of_before
        FROM {RatingChange._meta.db_table} AS h
        WHERE h.ladder_id = r.ladder_id AND h.player_id = r.player_id AND h.event_id >= %(first)s
        ORDER BY h.event_id
        LIMIT 1
    ) AS c
    WHERE r.ladder_id = %(ladder)s
"""


def _starting_standings(ladder: Ladder, first: int | None, members: list[tuple[Any, ...]]) -> dict[int, Standing]:
    """Each member's standing before event ``first``, as far as the events from ``first`` on go.

    The standing before a player's first history row from ``first`` on, which is the
    initial values they joined with (plus any RD write-backs before that event); a player
    with no such row has had no event since, so their rating row is that standing. Neither
    depends on the ladder's current settings: initial values changed after a player
    joined never reach them. (``_load_standings_before`` then sets the players with
    earlier history, in a replay from an event.)
    """
    standings = {
        player: Standing(rating, rd, volatility, rd_as_of)
        for _, player, _joined_at, rating, rd, volatility, rd_as_of in members
    }
    if first is None:
        return standings
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_STARTS_SQL, {"first": first, "ladder": ladder.pk})
            rows = cursor.fetchall()
    else:
        seen: dict[int, tuple[Any, ...]] = {}
        history = RatingChange.objects.filter(ladder=ladder, event_id__gte=first).order_by("player_id", "event_id")
        for row in history.values_list(
            "player_id", "rating_before", "rd_before", "volatility_before", "rd_as_of_before"
        ):
            seen.setdefault(row[0], row)
        rows = list(seen.values())
    for player, rating, rd, volatility, rd_as_of in rows:
        if player in standings:
            standings[player] = Standing(rating, rd, volatility, rd_as_of)
    return standings


def _load_standings_before(ladder: Ladder, first: int, standings: dict[int, Standing]) -> None:
    """Each player's standing just before event ``first``, from the current history."""
    earlier = RatingChange.objects.all().filter(ladder=ladder, event_id__lt=first)
    if connection.features.can_distinct_on_fields:
        latest = earlier.order_by("player_id", "-event_id").distinct("player_id")
    else:
        by_player: dict[int, RatingChange] = {}
        for change in earlier.order_by("event_id"):
            by_player[change.player_id] = change
        latest = list(by_player.values())
    for change in latest:
        standing = standings[change.player_id]
        standing.rating = change.rating_after
        standing.rd = change.rd_after
        standing.volatility = change.volatility_after
        standing.rd_as_of = change.rd_as_of_after
    counters = (
        earlier.filter(match__isnull=False)
        .values("player_id")
        .annotate(
            games=Count("id"),
            wins=Count("id", filter=Q(score__gt=0.5)),
            losses=Count("id", filter=Q(score__lt=0.5)),
            draws=Count("id", filter=Q(score=0.5)),
            last=Max("match__played_at"),
        )
    )
    for row in counters:
        standing = standings[row["player_id"]]
        standing.games, standing.wins, standing.losses, standing.draws = (
            row["games"],
            row["wins"],
            row["losses"],
            row["draws"],
        )
        standing.last_played_at = row["last"]


class _ChangeWriter:
    """Appends history rows: a binary ``COPY`` open for each ``with`` block on PostgreSQL,
    ``bulk_create`` elsewhere.

    psycopg's C dumpers write binary rows about six times faster than Python formats the
    same rows as text. The rows go to the server while the replay computes the next ones,
    so PostgreSQL stores and indexes them on another core meanwhile. The ``COPY`` ends
    with the block, because the connection cannot fetch the next part of the log while
    it is open.
    """

    CHUNK = 2_000  # rows per bulk_create

    def __init__(self, *, ladder_id: int, kind: str, created_at: datetime) -> None:
        self.count = 0
        self._postgres = connection.vendor == "postgresql"
        self._shared = (ladder_id, kind, created_at)
        self._json: dict[str, Any] = {}  # JSON text -> its jsonb adapter, made once per text
        self._rows: list[tuple[Any, ...]] = []
        self._stack: contextlib.ExitStack | None = None
        self._copy: Any = None

    def __enter__(self) -> _ChangeWriter:
        if self._postgres:
            with contextlib.ExitStack() as stack:
                cursor = stack.enter_context(connection.cursor())
                table = RatingChange._meta.db_table
                columns = ", ".join(ROW_COLUMNS + SHARED_COLUMNS)
                self._copy = stack.enter_context(
                    cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)")
                )
                self._copy.set_types(COPY_TYPES)
                self._stack = stack.pop_all()
        return self

    def write(self, row: tuple[Any, ...]) -> None:
        """``row`` holds the ``ROW_COLUMNS``, ``engine_params`` as JSON text."""
        self.count += 1
        if self._postgres:
            params = self._json.get(row[-1])
            if params is None:
                params = self._json[row[-1]] = Jsonb(row[-1], dumps=str)
            self._copy.write_row((*row[:-1], params, *self._shared))
            return
        self._rows.append(row)
        if len(self._rows) >= self.CHUNK:
            self._send()

    def _send(self) -> None:
        objects = []
        for row in self._rows:
            values = dict(zip(ROW_COLUMNS + SHARED_COLUMNS, row + self._shared, strict=True))
            values["engine_params"] = json.loads(values["engine_params"])
            objects.append(RatingChange(**values))
        RatingChange.objects.bulk_create(objects)
        self._rows.clear()

    def __exit__(self, *exc: Any) -> None:
        try:
            if exc[0] is None and self._rows:
                self._send()
        finally:
            self._rows.clear()
            if self._stack is not None:
                stack, self._stack, self._copy = self._stack, None, None
                stack.__exit__(*exc)


def _store_standings(ladder: Ladder, standings: dict[int, Standing]) -> None:
    """Write final standings: a temp table and one ``UPDATE … FROM`` on PostgreSQL."""
    if not standings:
        return
    if connection.vendor != "postgresql":
        rows = list(PlayerRating.objects.filter(ladder=ladder, player_id__in=list(standings)))
        for row in rows:
            standing = standings[row.player_id]
            for field in STANDING_COLUMNS:
                setattr(row, field, getattr(standing, field))
        PlayerRating.objects.bulk_update(rows, STANDING_COLUMNS, batch_size=500)
        return
    table = PlayerRating._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS replay_standing")
        cursor.execute(
            "CREATE TEMP TABLE replay_standing (player_id bigint PRIMARY KEY, rating double precision, "
            "rd double precision, volatility double precision, rd_as_of timestamptz, games integer, wins integer, "
            "losses integer, draws integer, last_played_at timestamptz) ON COMMIT DROP"
        )
        with cursor.cursor.copy(f"COPY replay_standing (player_id, {', '.join(STANDING_COLUMNS)}) FROM STDIN") as copy:
            for player, standing in standings.items():
                copy.write_row((player, *(getattr(standing, field) for field in STANDING_COLUMNS)))
        assignments = ", ".join(f"{field} = s.{field}" for field in STANDING_COLUMNS)
        cursor.execute(
            f"UPDATE {table} AS r SET {assignments} FROM replay_standing AS s "
            "WHERE r.ladder_id = %s AND r.player_id = s.player_id",
            [ladder.pk],
        )
        cursor.execute("DROP TABLE replay_standing")
