"""The nightly job (docs/rules.md §16): at each ladder's local midnight, materialise every RD and
snapshot the leaderboard.

Beat runs ``ladder.tasks.run_nightly_task`` every hour; it asks ``nightly_due`` which
ladders' local midnight has passed since their last run and runs ``ladder_nightly`` for
each, so every ladder runs at its own midnight and a night missed (beat or workers down)
is caught up by the next run: materialising to the later midnight gives the RDs both
nights would have given. A missed night has no snapshot of its own; its standings can no
longer be observed.

``ladder_nightly`` is safe to run twice: the ladder row is locked for the run, and a run
already recorded for that midnight makes the second one return at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock_time
from zoneinfo import ZoneInfo

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from ladder.models import Ladder, LeaderboardSnapshot, NightlyRun, SnapshotEntry
from ladder.standings import store
from ladder.standings.ranking import (
    listed_sql,
    provisional_sql,
    rank_order_sql,
    ranked_sql,
    scale_value,
    sort_value_sql,
)
from ratings.engines import display, is_provisional
from ratings.models import PlayerRating, RatingEvent
from ratings.nightly import ratings_materialise, rd_at_sql

NIGHTLY_NOT_MIDNIGHT = "%(at)s is not a midnight in %(zone)s, the time zone of %(ladder)s."
NIGHTLY_IN_FUTURE = "The midnight %(midnight)s has not come yet in %(ladder)s; the nightly job runs after it."
NIGHTLY_BEFORE_LAST = (
    "The nightly job of %(ladder)s already ran for %(last)s; it does not go back to the earlier midnight %(midnight)s."
)

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class NightlyResult:
    """The run that did ``midnight``: this call's (``ran``), or the earlier one it found.

    With ``ran`` False nothing changed now, and the figures are those of run ``run_id``,
    which started at ``started_at``.
    """

    ladder: Ladder
    midnight: datetime
    date: date
    ran: bool  # False: this midnight had already been done, nothing changed
    run_id: int
    started_at: datetime
    materialised: int
    snapshot_rows: int
    ranked_count: int
    provisional_count: int
    materialise_seconds: float
    snapshot_seconds: float
    duration_seconds: float


def local_midnight(*, ladder: Ladder, at: datetime) -> datetime:
    """The latest midnight of ``ladder``'s time zone at or before ``at``, in UTC.

    Where a daylight-saving change skips midnight, the day begins at the first instant
    it has (``zoneinfo`` maps the missing 00:00 there).
    """
    zone = ZoneInfo(ladder.time_zone)
    day = at.astimezone(zone).date()
    midnight = datetime.combine(day, clock_time.min, tzinfo=zone)
    if midnight > at:  # pragma: no cover - only where a skipped midnight maps past ``at``
        midnight = datetime.combine(day - timedelta(days=1), clock_time.min, tzinfo=zone)
    return midnight.astimezone(UTC)


def local_date(*, ladder: Ladder, midnight: datetime) -> date:
    return midnight.astimezone(ZoneInfo(ladder.time_zone)).date()


def local_midnights(*, ladder: Ladder, after: datetime, until: datetime) -> list[datetime]:
    """Every local midnight of ``ladder`` later than ``after`` and at or before ``until``.

    A local day lasts 23 to 25 hours, so 26 hours after one midnight is always in the
    next day.
    """
    midnights: list[datetime] = []
    midnight = local_midnight(ladder=ladder, at=after)
    while True:
        midnight = local_midnight(ladder=ladder, at=midnight + timedelta(hours=26))
        if midnight > until:
            return midnights
        midnights.append(midnight)


def nightly_due(*, now: datetime) -> list[tuple[Ladder, datetime]]:
    """Each ladder whose latest local midnight is past its last nightly run, with that midnight."""
    due: list[tuple[Ladder, datetime]] = []
    for ladder in Ladder.objects.annotate(last_midnight=Max("nightly_runs__midnight")).order_by("pk"):
        midnight = local_midnight(ladder=ladder, at=now)
        if ladder.last_midnight is None or midnight > ladder.last_midnight:
            due.append((ladder, midnight))
    return due


def ladder_nightly(
    *, ladder: Ladder, midnight: datetime, now: datetime | None = None, progress: Progress | None = None
) -> NightlyResult:
    """Materialise every RD of ``ladder`` at ``midnight`` and snapshot its leaderboard, once.

    Everything happens in one transaction with the ladder row locked (``FOR NO KEY
    UPDATE``: matches can still be reported meanwhile; their ratings wait for the
    materialisation, see ``ratings_materialise``). A run already recorded for
    ``midnight`` is returned as it is (``ran=False``). Refused with a ``ValidationError``:
    an instant that is not a local midnight, a midnight still to come, and a midnight
    earlier than the last run (catching up is done by the latest midnight alone).
    """
    now = now or timezone.now()
    say = progress or (lambda message: None)
    if local_midnight(ladder=ladder, at=midnight) != midnight:
        raise ValidationError(
            NIGHTLY_NOT_MIDNIGHT,
            code="not_midnight",
            params={"at": midnight.isoformat(), "zone": ladder.time_zone, "ladder": ladder.name},
        )
    if midnight > now:
        raise ValidationError(
            NIGHTLY_IN_FUTURE, code="future", params={"midnight": midnight.isoformat(), "ladder": ladder.name}
        )
    started = time.perf_counter()
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update(no_key=True).get(pk=ladder.pk)
        runs = NightlyRun.objects.filter(ladder=ladder)
        done = runs.filter(midnight=midnight).first()
        if done is not None:
            say(f"already done for {done.date:%Y-%m-%d} {already_done_by(done)}; nothing changed")
            return _result(ladder, done, ran=False)
        last = runs.aggregate(last=Max("midnight"))["last"]
        if last is not None and midnight < last:
            raise ValidationError(
                NIGHTLY_BEFORE_LAST,
                code="before_last",
                params={"ladder": ladder.name, "last": last.isoformat(), "midnight": midnight.isoformat()},
            )
        say("materialising RDs")
        materialised = ratings_materialise(ladder=ladder, at=midnight)
        # Read after the UPDATE: every event that held one of those rows has committed.
        last_event_id = RatingEvent.objects.filter(ladder=ladder).aggregate(last=Max("id"))["last"]
        materialised_at = time.perf_counter()
        say(f"materialised {materialised:,} ratings in {materialised_at - started:.2f} s; taking the snapshot")
        snapshot = leaderboard_snapshot(ladder=ladder, midnight=midnight, now=now)
        finished = time.perf_counter()
        rows = snapshot.entries.count()
        say(
            f"snapshot of {rows:,} ranked player{'s' if rows != 1 else ''} ({snapshot.ranked_count:,} ranked, "
            f"{snapshot.provisional_count:,} provisional) in {finished - materialised_at:.2f} s"
        )
        run = NightlyRun.objects.create(
            ladder=ladder,
            midnight=midnight,
            date=snapshot.date,
            materialised=materialised,
            snapshot_rows=rows,
            last_event_id=last_event_id,
            started_at=now,
            materialise_seconds=materialised_at - started,
            snapshot_seconds=finished - materialised_at,
            duration_seconds=finished - started,
        )
        return _result(ladder, run, ran=True, snapshot=snapshot)


def already_done_by(run: NightlyRun) -> str:
    """Which run did a midnight, and when: "by run 12, started 2026-03-02 00:05:01 UTC"."""
    return f"by run {run.pk}, started {run.started_at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def _result(
    ladder: Ladder, run: NightlyRun, *, ran: bool, snapshot: LeaderboardSnapshot | None = None
) -> NightlyResult:
    if snapshot is None:
        snapshot = LeaderboardSnapshot.objects.filter(ladder=ladder, date=run.date).first()
    return NightlyResult(
        ladder=ladder,
        midnight=run.midnight,
        date=run.date,
        ran=ran,
        run_id=run.pk,
        started_at=run.started_at,
        materialised=run.materialised,
        snapshot_rows=run.snapshot_rows,
        ranked_count=snapshot.ranked_count if snapshot else 0,
        provisional_count=snapshot.provisional_count if snapshot else 0,
        materialise_seconds=run.materialise_seconds,
        snapshot_seconds=run.snapshot_seconds,
        duration_seconds=run.duration_seconds,
    )


def leaderboard_snapshot(*, ladder: Ladder, midnight: datetime, now: datetime | None = None) -> LeaderboardSnapshot:
    """Snapshot ``ladder``'s ranked leaderboard at ``midnight``: the top ``snapshot_size`` players.

    RDs are taken at ``midnight`` (a rating whose clock is already past it, from a game
    since, keeps its own RD), ratings as they are now: run right after the midnight, as
    the nightly job does, the two agree. One query ranks the whole ladder in PostgreSQL
    (a top-N sort, no row leaves the server but the N kept) and one counts members,
    ranked and provisional players; the N entries get their display values from the
    engines' ``display`` and go in with one insert. A snapshot of the same local date is
    replaced. Other databases (the embedded SQLite default), and PostgreSQL under
    ``core.db.orm_twins()``, rank in Python, as the live leaderboard does (``ladder.standings.store``
    chooses).
    """
    now = now or timezone.now()
    rank = store.snapshot_ranking(in_sql=_rank_in_sql, in_python=_rank_in_python)
    top, members, ranked_count, provisional_count = rank(ladder, midnight)
    day = local_date(ladder=ladder, midnight=midnight)
    LeaderboardSnapshot.objects.filter(ladder=ladder, date=day).delete()
    snapshot = LeaderboardSnapshot.objects.create(
        ladder=ladder,
        date=day,
        midnight=midnight,
        taken_at=now,
        scale=ladder.leaderboard_scale,
        size=ladder.snapshot_size,
        member_count=members,
        ranked_count=ranked_count,
        provisional_count=provisional_count,
    )
    SnapshotEntry.objects.bulk_create(
        [
            SnapshotEntry(
                snapshot=snapshot,
                rank=rank,
                player_id=player_id,
                rating=rating,
                rd=rd_value,
                value=scale_value(ladder.leaderboard_scale, display(rating, rd_value)),
            )
            for rank, (player_id, rating, rd_value) in enumerate(top, start=1)
        ],
        batch_size=5_000,
    )
    return snapshot


Ranking = tuple[list[tuple[int, float, float]], int, int, int]  # top (player, rating, RD), members, ranked, provisional


def _rank_in_sql(ladder: Ladder, midnight: datetime) -> Ranking:
    table = PlayerRating._meta.db_table
    rd, params = rd_at_sql(ladder, midnight, "r")
    ranked, ranked_params = ranked_sql(ladder, midnight, "m.rd", "r")
    order, order_params = sort_value_sql(ladder.leaderboard_scale, "m.rd", "r")
    listed, listed_params = listed_sql(midnight, "r")
    params = {
        **params,
        **ranked_params,
        **order_params,
        **listed_params,
        "ladder": ladder.pk,
        "size": ladder.snapshot_size,
    }
    source = (
        f"FROM {table} AS r CROSS JOIN LATERAL (SELECT {rd} AS rd) AS m WHERE r.ladder_id = %(ladder)s AND {listed}"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT r.player_id, r.rating, m.rd {source} AND {ranked} "
            f"ORDER BY {rank_order_sql(order, 'r')} LIMIT %(size)s",
            params,
        )
        top = cursor.fetchall()
        cursor.execute(
            f"SELECT count(*), count(*) FILTER (WHERE {ranked}), count(*) FILTER (WHERE {provisional_sql('m.rd')}) "
            f"{source} AND r.is_active",
            params,
        )
        members, ranked_count, provisional_count = cursor.fetchone()
    return top, members, ranked_count, provisional_count


def _rank_in_python(ladder: Ladder, midnight: datetime) -> Ranking:
    """The embedded default (SQLite): the live leaderboard's own ranking, at the midnight."""
    from ladder.standings.leaderboard import ladder_standings

    ranked, unranked = ladder_standings(ladder=ladder, now=midnight)
    top = [(row.rating.player_id, row.rating.rating, row.rd_now) for row in ranked[: ladder.snapshot_size]]
    provisional = sum(1 for row in ranked + unranked if is_provisional(row.rd_now, ladder.provisional_rd))
    return top, len(ranked) + len(unranked), len(ranked), provisional
