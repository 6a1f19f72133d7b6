"""Which rating settings each part of a ladder's rating log was computed with, for replays.

A ladder's rating settings (engine, constants, initial values) can change after games
are rated: through ``ladder.standings.rating_settings``, which records a
``RatingSettingsChange``, or, before that existed, by editing the ladder directly. A
replay must rate every event with the settings it was rated with live, or replaying
after such a change would silently move every rating. The sources, in order of trust:

- **A match event's own history rows** record the engine and its constants (``engine``,
  ``engine_params``): the event is replayed with exactly those. This also covers changes
  made before they were recorded.
- **An RD write-back**: a nightly run reads the ladder row under a lock, so it used the
  new values of the latest recorded change before it; a "from now on" change wrote RDs
  back under its old values. Without a recorded change before it (edits from before
  changes were recorded), a night used the settings of the latest recorded match.
- **An adjustment or a match event without current rows**: the settings of the latest
  entry before it, an entry being a recorded match event or a recorded change.
- Before every entry: the old values of the first recorded change, else the settings of
  the first recorded match, else the ladder's current settings.
- **A re-rate** (``mode=rerate``) replayed everything before it under its new values, so
  every point of the log before the latest re-rate uses that re-rate's values.

Idle RD growth follows the settings in force: a "from now on" change writes every RD back
at its instant under the old settings (like a nightly run, and recorded), so time before
the change grows the old way and time after it the new way; a nightly run grows with the
settings of its night. New players start with the initial values in force when they
joined; a replay takes a player's start from the history (``ratings.replay``), so later
changes of the initial values never reach players who joined before them.

Looking settings up must cost next to nothing on a big ladder (a million events a
minute): the history is checked where the record says the settings changed (the ends of
each stretch between changes) rather than row by row, events are looked up in runs with a
cursor, and engines are built once per distinct settings. Only when the history
disagrees with the record (an edit made directly in the database) is all of it read.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ratings import store
from ratings.engines import Engine, Params, get_engine
from ratings.models import RatingChange, RatingEvent, RatingSettingsChange, SettingsChangeMode
from ratings.nightly import NightlyTimeline

if TYPE_CHECKING:
    from ladder.models import Ladder
    from ratings.history import Standing

# Every field of ``Ladder`` that changes how results become ratings.
RATING_SETTING_FIELDS = (
    "engine",
    "initial_rating",
    "initial_rd",
    "rd_max",
    "rd_min",
    "rd_growth_per_day",
    "luck_p",
    "glicko_c",
    "rating_period_days",
    "initial_volatility",
    "tau",
    "elo_k",
    "trueskill_beta",
    "trueskill_tau",
    "draw_probability",
    "team_update",
    "newcomer_games",
    "newcomer_cap",
)
_PARAM_FIELDS = {field.name for field in dataclasses.fields(Params)}
# Settings added after changes were first recorded, with the value that rates as ladders did
# before them: a record without one was made under that value, not the ladder's current one.
_ADDED_LATER = {
    "rd_min": None,
    "trueskill_beta": 175.0,
    "trueskill_tau": 3.5,
    "draw_probability": 0.1,
    "newcomer_games": 0,
    "newcomer_cap": 30.0,
}


def rating_settings(ladder: Ladder) -> dict[str, Any]:
    """The ladder's rating settings as plain values (what a ``RatingSettingsChange`` records)."""
    return {name: getattr(ladder, name) for name in RATING_SETTING_FIELDS}


def ladder_with(ladder: Ladder, values: Mapping[str, Any]) -> Ladder:
    """An unsaved copy of ``ladder`` with the rating ``values`` in place of its own."""
    other = copy.copy(ladder)
    other.__dict__.pop("_engine_cache", None)
    for name in RATING_SETTING_FIELDS:
        if name in values:
            setattr(other, name, values[name])
    return other


@dataclass(frozen=True, slots=True)
class RatedWith:
    """An engine with its constants, and the JSON text history rows record for it."""

    name: str
    params: Params
    engine: Engine
    json: str


class EngineBook:
    """Engines built once per distinct settings: a replay looks one up per event."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, Params], RatedWith] = {}
        self._by_text: dict[tuple[str, str], RatedWith] = {}

    def get(self, name: str, params: Params) -> RatedWith:
        key = (name, params)
        found = self._by_key.get(key)
        if found is None:
            text = json.dumps({"engine": name, **dataclasses.asdict(params)})
            found = self._by_key[key] = RatedWith(name, params, get_engine(name, params), text)
        return found

    def of_ladder(self, ladder: Ladder) -> RatedWith:
        return self.get(ladder.engine, ladder.engine_params())

    def of_values(self, ladder: Ladder, values: Mapping[str, Any]) -> RatedWith:
        return self.of_ladder(ladder_with(ladder, values))

    def of_record(self, ladder: Ladder, values: Mapping[str, Any]) -> RatedWith:
        """The settings a ``RatingSettingsChange`` recorded (old or new values), complete."""
        return self.of_values(ladder, {**_ADDED_LATER, **values})

    def of_recorded(self, name: str, recorded: Any) -> RatedWith:
        """The engine a history row records (``engine`` and ``engine_params``, as JSON text or parsed)."""
        text = recorded if isinstance(recorded, str) else json.dumps(recorded, sort_keys=True)
        found = self._by_text.get((name, text))
        if found is None:
            values = json.loads(text) if isinstance(recorded, str) else recorded
            params = Params(**{key: value for key, value in values.items() if key in _PARAM_FIELDS})
            found = self._by_text[(name, text)] = self.get(name, params)
        return found


@dataclass(frozen=True, slots=True)
class _Run:
    first: int
    last: int
    rated: RatedWith


class SettingsTimeline:
    """Settings per rating event and per RD write-back of one ladder (see the module docstring).

    ``for_match`` and ``for_adjustment`` must be asked in increasing event order, as a
    replay applies events: each keeps a cursor instead of searching.
    """

    def __init__(
        self,
        *,
        runs: list[_Run],
        changes: list[tuple[tuple[int, datetime], RatedWith, RatedWith, bool]],
        default: RatedWith,
        nights: list[tuple[int, datetime]],
        override: RatedWith | None = None,
    ) -> None:
        # One setting for everything: a re-rate, or a ladder whose history records one (or none) and no change.
        self._override = override
        if override is None and not changes and len(runs) <= 1:
            self._override = runs[0].rated if runs else default
        self._runs = runs
        self._run_index = 0
        # The latest re-rate replaced everything before it.
        self._rerate: tuple[tuple[int, datetime], RatedWith] | None = None
        for key, _old, new, rerate in changes:
            if rerate:
                self._rerate = (key, new)
        # Before every record: the old values of the first change, else the first recorded event's.
        before_any = next((old for _key, old, _new, rerate in changes), runs[0].rated if runs else default)
        # Entries for points no match event records: run starts and changes, by position.
        entries: list[tuple[tuple[int, int, datetime | None], RatedWith]] = [
            ((run.first, 0, None), run.rated) for run in runs
        ]
        entries += [((key[0], 1, key[1]), new) for key, _old, new, _rerate in changes]
        entries.sort(key=lambda entry: (entry[0][0], entry[0][1], entry[0][2].timestamp() if entry[0][2] else 0.0))
        self._entries = entries
        self._entry_positions = [(position[0], position[1]) for position, _ in entries]
        self._before_any = before_any
        self._changes = sorted(((key, new) for key, _old, new, _rerate in changes), key=lambda change: change[0])
        # RD write-back points: nightly runs and "from now on" changes, each with its settings;
        # consecutive points with the same settings form one ``NightlyTimeline``.
        points: list[tuple[int, datetime, RatedWith]] = [
            (event_id, midnight, self._at_point(event_id, midnight)) for event_id, midnight in nights
        ]
        # A re-rate replayed the history without the write-backs of earlier changes.
        points += [
            (key[0], key[1], old)
            for key, old, _new, rerate in changes
            if not rerate and (self._rerate is None or key > self._rerate[0])
        ]
        points.sort(key=lambda point: (point[0], point[1]))
        segments: list[tuple[list[tuple[int, datetime]], RatedWith]] = []
        for event_id, at, rated in points:
            rated = override or rated
            if not segments or segments[-1][1] is not rated:
                segments.append(([], rated))
            segments[-1][0].append((event_id, at))
        self._segments = [(NightlyTimeline(runs_of_points), rated.engine) for runs_of_points, rated in segments]

    @classmethod
    def of(cls, ladder: Ladder, *, override: Mapping[str, Any] | None = None) -> SettingsTimeline:
        """The timeline of ``ladder`` from its history, changes and nightly runs.

        With ``override`` (rating settings), every event and write-back uses those instead:
        a re-rate of the whole history.
        """
        from ladder.models import NightlyRun

        book = EngineBook()
        nights = [
            (event_id or 0, midnight)
            for event_id, midnight in NightlyRun.objects.filter(ladder=ladder).values_list("last_event_id", "midnight")
        ]
        default = book.of_ladder(ladder)
        if override is not None:
            return cls(runs=[], changes=[], default=default, nights=nights, override=book.of_values(ladder, override))
        changes = [
            (
                (change.after_event_id or 0, change.created_at),
                book.of_record(ladder, change.old_values),
                book.of_record(ladder, change.new_values),
                change.mode == SettingsChangeMode.RERATE,
            )
            for change in RatingSettingsChange.objects.filter(ladder=ladder).order_by("id")
        ]
        changes.sort(key=lambda change: change[0])
        runs = _runs_as_recorded(ladder, book, changes, default)
        if runs is None:  # the history disagrees with the record somewhere: read all of it
            runs = _load_runs(ladder, book)
        return cls(runs=runs, changes=changes, default=default, nights=nights)

    def _replaced(self, key: tuple[int, datetime]) -> RatedWith | None:
        if self._rerate is not None and key < self._rerate[0]:
            return self._rerate[1]
        return None

    def _latest_entry(self, event_id: int, tie: int) -> RatedWith:
        """The settings of the latest entry strictly before position ``(event_id, tie)``."""
        index = bisect.bisect_left(self._entry_positions, (event_id, tie)) - 1
        return self._entries[index][1] if index >= 0 else self._before_any

    def _at_point(self, event_id: int, at: datetime) -> RatedWith:
        """Settings of an RD write-back after event ``event_id`` at instant ``at``.

        The nightly job reads the ladder row under a lock, so the latest recorded change
        before the night says what it used; without one (edits from before changes were
        recorded), the latest recorded event does.
        """
        replaced = self._replaced((event_id, at))
        if replaced is not None:
            return replaced
        changes = [rated for key, rated in self._changes if key < (event_id, at)]
        if changes:
            return changes[-1]
        index = bisect.bisect_right(self._entry_positions, (event_id, 0)) - 1
        return self._entries[index][1] if index >= 0 else self._before_any

    def for_match(self, event_id: int) -> RatedWith:
        """The settings a match event was rated with (its history rows say)."""
        if self._override is not None:
            return self._override
        runs = self._runs
        while self._run_index < len(runs) and runs[self._run_index].last < event_id:
            self._run_index += 1
        if self._run_index < len(runs) and runs[self._run_index].first <= event_id:
            return runs[self._run_index].rated
        return self.for_adjustment(event_id)

    def for_adjustment(self, event_id: int) -> RatedWith:
        """The settings in force at an event no history row records (an adjustment's RD at the event)."""
        if self._override is not None:
            return self._override
        if self._rerate is not None and event_id <= self._rerate[0][0]:
            return self._rerate[1]
        return self._latest_entry(event_id, 0)

    def __bool__(self) -> bool:
        """Whether the log has RD write-backs a replay must repeat."""
        return bool(self._segments)

    def materialise(
        self, standings: dict[int, Standing], players: Iterable[int], *, before_event: int | None = None
    ) -> None:
        """Write RDs back as the live ladder did before ``before_event`` (at the end, without it).

        Each run of write-backs with the same settings is one ``NightlyTimeline``; they are
        applied in order, so time up to a change grows under the settings before it.
        """
        if len(self._segments) == 1:
            nights, engine = self._segments[0]
            nights.materialise(engine, standings, players, before_event=before_event)
            return
        players = list(players)
        for nights, engine in self._segments:
            nights.materialise(engine, standings, players, before_event=before_event)


def _runs_as_recorded(
    ladder: Ladder,
    book: EngineBook,
    changes: list[tuple[tuple[int, datetime], RatedWith, RatedWith, bool]],
    default: RatedWith,
) -> list[_Run] | None:
    """The runs the recorded changes imply, if the history agrees at both ends of each; else None.

    Between two recorded changes every match was rated with the same settings (the ones
    in force; before a re-rate, its values), so checking the first and the last recorded
    match of each stretch costs four index lookups instead of reading every history row,
    which took a tenth of a big replay. An edit made directly in the database shows up as
    a stretch whose ends disagree with the record, and then the whole history is read
    (``_load_runs``); only an unrecorded edit undone before the stretch ended goes unseen.
    """
    rerate = None
    for key, _old, new, is_rerate in changes:
        if is_rerate:
            rerate = (key[0], new)
    stretches: list[tuple[int, int, RatedWith]] = []
    low, rated = 0, changes[0][1] if changes else default
    for key, _old, new, _is_rerate in changes:
        stretches.append((low, key[0], rated))
        low, rated = key[0], new
    stretches.append((low, 2**62, rated))
    runs = []
    for low, high, rated in stretches:
        if rerate is not None and high <= rerate[0]:
            rated = rerate[1]
        ends = []
        for order in ("id", "-id"):
            event_id = (
                RatingEvent.objects.filter(ladder=ladder, kind="match", is_active=True, id__gt=low, id__lte=high)
                .order_by(order)
                .values_list("id", flat=True)
                .first()
            )
            if event_id is None:
                break
            # No ORDER BY: with one, PostgreSQL may walk the primary key looking for the event.
            rows = RatingChange.objects.filter(event_id=event_id).values_list("engine", "engine_params")[:1]
            row = next(iter(rows), None)
            if row is None or book.of_recorded(*row) is not rated:
                return None
            ends.append(event_id)
        if ends:
            runs.append(_Run(ends[0], ends[1], rated))
    return runs


def _load_runs(ladder: Ladder, book: EngineBook) -> list[_Run]:
    """Runs of match events with the same recorded settings, in event order, not overlapping."""
    stretches = store.settings_stretches(ladder.pk)
    if stretches is not None:
        groups = [_Run(low, high, book.of_recorded(name, text)) for name, text, low, high in stretches]
        groups.sort(key=lambda run: run.first)
        if all(a.last < b.first for a, b in itertools.pairwise(groups)):
            return groups
    rows = store.settings_by_event(ladder.pk)
    events = [(event_id, book.of_recorded(name, params)) for event_id, name, params in rows]
    runs: list[_Run] = []
    for event_id, rated in events:
        if runs and runs[-1].rated is rated:
            runs[-1] = _Run(runs[-1].first, event_id, rated)
        else:
            runs.append(_Run(event_id, event_id, rated))
    return runs
