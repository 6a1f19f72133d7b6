"""Replaying a ladder's rating log: the whole history, or from the first affected event.

Built for ladders with millions of matches: the log is streamed from the database in
event order (one query for the matches' players, one for adjustments), the arithmetic is
``ratings.history`` (the same as the live updates), new history rows stream into
PostgreSQL with ``COPY`` (batched ``bulk_create`` elsewhere), and the final standings go
back through a temporary table in one ``UPDATE``. The PostgreSQL statements are in
``ratings.sql``; ``ratings.store`` holds each one's ORM twin and picks.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.db import transaction
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from ladder.models import Ladder, Participant
from ratings import hooks, store
from ratings.history import (
    ChangeRow,
    Standing,
    adjustment_change,
    apply_adjustment,
    apply_match,
    initial_standing,
    match_changes,
    reset_params,
    reset_standing,
)
from ratings.models import (
    ChangeKind,
    EventKind,
    PlayerRating,
    RatingAdjustment,
    RatingChange,
    RatingEvent,
    RatingReset,
)
from ratings.resets import reset_players
from ratings.settings_timeline import SettingsTimeline, ladder_with

EVENTS_PER_BATCH = 50_000
PROGRESS_EVERY = 10_000  # events between two progress reports


@dataclass(frozen=True, slots=True)
class ReplayStats:
    events: int
    matches: int
    adjustments: int
    players: int
    changes: int


@dataclass(slots=True)
class _Event:
    """A rating event of the log: a match's players by side and placements, an adjustment, or a
    season's reset with the players it applies to."""

    id: int
    at: datetime
    match_id: int | None = None
    layout: list[list[int]] = dataclasses.field(default_factory=list)
    placements: list[int] = dataclasses.field(default_factory=list)
    adjustment: RatingAdjustment | None = None
    reset: RatingReset | None = None
    players: list[int] = dataclasses.field(default_factory=list)


@dataclass(slots=True)
class _Start:
    """Where a replay starts: its first event (None: nothing to replay) and the standings before it."""

    first: int | None
    full: bool
    standings: dict[int, Standing]
    timeline: SettingsTimeline


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
    ``ladder.standings.rating_settings`` does that for a moderator, under a record.
    """
    if settings is not None and from_event_id is not None:
        raise ValueError("a re-rate under new settings replays the whole history; from_event_id must be None")
    with transaction.atomic():
        start = _start(ladder, from_event_id=from_event_id, settings=settings, lock=True)
        total = _active_events(ladder, from_event_id).count()
        touched = set(start.standings) if start.full else set()
        if start.first is not None:
            if not start.full:
                replaced = RatingChange.objects.filter(ladder=ladder, event_id__gte=start.first)
                touched.update(replaced.values_list("player_id", flat=True).distinct())
            store.history_supersede(ladder, start.first, now=timezone.now())
        writer = store.change_writer(ladder_id=ladder.pk, kind=ChangeKind.REPLAY.value, created_at=timezone.now())
        rater = _rate_log(ladder=ladder, start=start, writer=writer, touched=touched, total=total, progress=progress)
        store.standings_store(ladder, {player: start.standings[player] for player in touched})
        hooks.ladder_replayed(ladder.pk)
        return ReplayStats(
            events=total,
            matches=rater.matches,
            adjustments=rater.adjustments,
            players=len(touched),
            changes=writer.count,
        )


def ladder_rerate_preview(*, ladder: Ladder, settings: dict[str, Any]) -> dict[int, Standing]:
    """Every member's standing if the whole history were re-rated under ``settings``; writes nothing.

    The same computation as ``ladder_replay(settings=...)``, in memory: nothing is locked
    or written, so live ratings go on meanwhile (the preview is of the log as read).
    """
    with transaction.atomic():
        start = _start(ladder, from_event_id=None, settings=settings, lock=False)
        _rate_log(ladder=ladder, start=start, writer=_NoWriter(), touched=set(start.standings), total=0, progress=None)
    return start.standings


def _active_events(ladder: Ladder, from_event_id: int | None) -> QuerySet[RatingEvent]:
    events = RatingEvent.objects.filter(ladder=ladder, is_active=True)
    return events if from_event_id is None else events.filter(pk__gte=from_event_id)


def _start(ladder: Ladder, *, from_event_id: int | None, settings: dict[str, Any] | None, lock: bool) -> _Start:
    """Lock (``lock``) and read the members, then find each one's standing before the first replayed event."""
    members = PlayerRating.objects.filter(ladder=ladder).order_by("pk")
    if lock:
        members = members.select_for_update()
    rows = list(members.values_list("pk", "player_id", "joined_at", "rating", "rd", "volatility", "rd_as_of"))
    first = from_event_id
    if first is None:
        first = _active_events(ladder, None).order_by("pk").values_list("pk", flat=True).first()
    timeline = SettingsTimeline.of(ladder, override=settings)
    if settings is not None:
        fresh = ladder_with(ladder, settings)
        standings = {row[1]: initial_standing(fresh, row[2]) for row in rows}
    else:
        standings = _starting_standings(ladder, first, rows)
    if from_event_id is not None:
        _load_standings_before(ladder, from_event_id, standings)
    return _Start(first, from_event_id is None, standings, timeline)


class _Writer(Protocol):
    count: int

    def __enter__(self) -> Any: ...
    def __exit__(self, *exc: Any) -> None: ...
    def write(self, event_id: int, match_id: int | None, engine: str, params: str, rows: Sequence[ChangeRow]) -> None:
        """The history ``rows`` of one event; ``params`` is ``engine_params`` as JSON text."""


def _rate_log(
    *,
    ladder: Ladder,
    start: _Start,
    writer: _Writer,
    touched: set[int],
    total: int,
    progress: Callable[[int, int], None] | None,
) -> _Rater:
    """Apply the active events from ``start.first`` on to ``start.standings`` (in place).

    History rows go to ``writer``; ``touched`` gains every player an event changed. Ends
    with the RD write-backs after the last event for every ``touched`` player.
    """
    rater = _Rater(start, writer, touched)
    stream = _stream(ladder, start.first)
    done = 0
    # The log is read a batch at a time between COPYs: a connection cannot fetch while a COPY is open.
    while batch := list(itertools.islice(stream, EVENTS_PER_BATCH)):
        with writer:
            for event in batch:
                rater.rate(event)
                done += 1
                if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
                    progress(done, total)
    if progress is not None and total == 0:
        progress(0, 0)
    rater.finish()
    return rater


class _Rater:
    """Rates one event after another from the running standings, as the live updates did."""

    __slots__ = ("adjustments", "full", "matches", "nights", "standings", "timeline", "touched", "writer")

    def __init__(self, start: _Start, writer: _Writer, touched: set[int]) -> None:
        self.standings = start.standings
        self.timeline = start.timeline
        # RDs written back at midnights and at settings changes, between events (None: there are none).
        self.nights = start.timeline if start.timeline else None
        self.full = start.full
        self.writer = writer
        self.touched = touched
        self.matches = 0
        self.adjustments = 0

    def rate(self, event: _Event) -> None:
        if event.reset is not None:
            self._reset(event, event.reset)
        elif event.adjustment is None:
            self._match(event)
        else:
            self._adjustment(event, event.adjustment)

    def _match(self, event: _Event) -> None:
        if self.nights is not None:
            players = [player for side in event.layout for player in side]
            self.nights.materialise(self.standings, players, before_event=event.id)
        rated = self.timeline.for_match(event.id)
        standings = self.standings
        result, after = apply_match(
            engine=rated.engine,
            layout=event.layout,
            placements=event.placements,
            played_at=event.at,
            standings=standings,
        )
        rows = match_changes(event.layout, result, standings, after)
        self.writer.write(event.id, event.match_id, rated.name, rated.json, rows)
        standings.update(after)
        if not self.full:
            self.touched.update(after)
        self.matches += 1

    def _adjustment(self, event: _Event, adjustment: RatingAdjustment) -> None:
        if self.nights is not None:
            self.nights.materialise(self.standings, [adjustment.player_id], before_event=event.id)
        rated = self.timeline.for_adjustment(event.id)
        old = self.standings[adjustment.player_id]
        new = apply_adjustment(adjustment, old, rated.engine)
        rd_at_event = rated.engine.rd_at(old.state(), event.at.timestamp())
        row = adjustment_change(adjustment.player_id, old, new, rd_at_event)
        self.writer.write(event.id, None, rated.name, json.dumps({"reason": adjustment.reason}), [row])
        self.standings[adjustment.player_id] = new
        self.touched.add(adjustment.player_id)
        self.adjustments += 1

    def _reset(self, event: _Event, reset: RatingReset) -> None:
        """A season's soft reset (``ratings.resets``): every player it applied to live, in one event."""
        if self.nights is not None:
            self.nights.materialise(self.standings, event.players, before_event=event.id)
        rated = self.timeline.for_adjustment(event.id)
        rows = []
        for player in event.players:
            old = self.standings[player]
            rd_at_event, new = reset_standing(old, reset, rated.engine)
            rows.append(adjustment_change(player, old, new, rd_at_event))
            self.standings[player] = new
        self.writer.write(event.id, None, rated.name, json.dumps(reset_params(reset)), rows)
        self.touched.update(event.players)

    def finish(self) -> None:
        """The RD write-backs after the last event."""
        if self.nights is not None:
            self.nights.materialise(self.standings, self.touched)


def _stream(ladder: Ladder, first: int | None) -> Iterator[_Event]:
    """Active events from ``first`` on, in id order, each with its match's sides or its adjustment."""
    if first is None:
        return
    # Adjustments and resets, read before the matches: a COPY may be open while events are rated.
    adjustments = {
        event.pk: _adjustment_event(event)
        for event in RatingEvent.objects.filter(
            ladder=ladder, is_active=True, kind__in=[EventKind.ADJUSTMENT, EventKind.SEASON], pk__gte=first
        ).select_related("adjustment", "reset")
    }
    pending = sorted(adjustments)
    query = (
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
    rows = store.participant_rows(query)
    current: _Event | None = None
    for event_id, match_id, played_at, side_index, placement, player_id in rows:
        if current is None or current.id != event_id:
            if current is not None:
                yield current
            while pending and pending[0] < event_id:
                yield adjustments[pending.pop(0)]
            current = _Event(id=event_id, at=played_at, match_id=match_id)
        if side_index == len(current.layout):
            current.layout.append([])
            current.placements.append(placement)
        current.layout[side_index].append(player_id)
    if current is not None:
        yield current
    for event_id in pending:
        yield adjustments[event_id]


def _adjustment_event(event: RatingEvent) -> _Event:
    if event.reset is not None:
        return _Event(id=event.pk, at=event.at, reset=event.reset, players=reset_players(event.reset))
    return _Event(id=event.pk, at=event.at, adjustment=event.adjustment)


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
    rows = store.starting_rows(ladder, first)
    for player, rating, rd, volatility, rd_as_of in rows:
        if player in standings:
            standings[player] = Standing(rating, rd, volatility, rd_as_of)
    return standings


def _load_standings_before(ladder: Ladder, first: int, standings: dict[int, Standing]) -> None:
    """Each player's standing just before event ``first``, from the current history."""
    earlier = RatingChange.objects.all().filter(ladder=ladder, event_id__lt=first)
    for change in store.latest_changes(earlier):
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


class _NoWriter:
    """A writer that keeps nothing, for previews."""

    count = 0

    def __enter__(self) -> _NoWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def write(self, event_id: int, match_id: int | None, engine: str, params: str, rows: Sequence[ChangeRow]) -> None:
        return None


REPLAYED_FIELDS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")


@dataclass(frozen=True, slots=True)
class ReplayDifference:
    player_id: int
    field: str
    live: Any
    replayed: Any


def ladder_replay_differences(*, ladder: Ladder) -> list[ReplayDifference]:
    """Replay ``ladder`` from the start and compare every rating with the stored one, exactly
    (``==`` on the floats: the bits), then undo the replay: nothing is left written. An empty
    list means the stored ratings are what the history gives (after a restore, say)."""
    with transaction.atomic():
        live = _standings_now(ladder)
        ladder_replay(ladder=ladder)
        replayed = _standings_now(ladder)
        transaction.set_rollback(True)
    differences = []
    for player_id in sorted(live.keys() | replayed.keys()):
        before, after = live.get(player_id), replayed.get(player_id)
        for index, field in enumerate(REPLAYED_FIELDS):
            a = before[index] if before is not None else None
            b = after[index] if after is not None else None
            if a != b:
                differences.append(ReplayDifference(player_id=player_id, field=field, live=a, replayed=b))
    return differences


def _standings_now(ladder: Ladder) -> dict[int, tuple[Any, ...]]:
    rows = PlayerRating.objects.filter(ladder=ladder).values_list("player_id", *REPLAYED_FIELDS)
    return {row[0]: tuple(row[1:]) for row in rows}
