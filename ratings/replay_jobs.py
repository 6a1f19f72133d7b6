"""Replay jobs: a moderator's decision is recorded at once, its replay runs in a Celery worker.

Replaying a big ladder takes about a minute per million matches, longer than a web
request may take. So voiding or correcting a rated match, or replaying a ladder, writes
the decision and a ``ReplayJob`` in the request's transaction and enqueues
``ratings.tasks.run_replay_job_task`` once that commits (inline, with eager Celery).

Why the ratings come out exact whatever happens meanwhile: results confirmed while a job
waits are rated live from the standings of the moment, and get their ``RatingEvent`` in
the order they happened, as always; the replay recomputes every event from the job's
start on, those included, with every rating row of the ladder locked, and marks its jobs
done in that same transaction. So once no job of a ladder is unfinished, its live
ratings are exactly what a full replay gives.

A run takes every unfinished job of its ladder (two voids in a row cost one replay, from
the earlier event) under a per-ladder advisory lock, so a second run of the same job
(``acks_late`` redelivery, a retry, the admin's "Run again") waits, then finds it done.
A worker lost mid-replay rolls back its transaction; the redelivered task runs it again.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models import Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from ladder.models import Ladder, Match
from ratings import sql, store
from ratings.models import RatingEvent, ReplayJob, ReplayJobKind, ReplayJobStatus
from ratings.replay import ladder_replay

logger = logging.getLogger(__name__)

ERROR_MAX_CHARS = 2_000
STALE_AFTER = timedelta(minutes=10)  # a queued job older than this is sent to a worker again
RUN_STALE_AFTER = timedelta(minutes=5)  # a running job whose worker is silent this long (and gone) is ended
WORKER_LOST = (
    "The worker running this replay stopped (it was stopped or its machine lost); the replay was rolled back "
    "and the decision stands. Run the job again to bring the ratings up to date."
)


def replay_job_request(
    *,
    ladder: Ladder,
    kind: ReplayJobKind,
    requested_by: User | None,
    reason: str = "",
    match: Match | None = None,
    from_event_id: int | None = None,
) -> ReplayJob:
    """Record a replay of ``ladder`` from ``from_event_id`` (the whole log if None), run after commit.

    Call it inside the transaction that records the decision, so the job exists exactly
    when the decision does.
    """
    job = ReplayJob.objects.create(
        ladder=ladder,
        kind=kind,
        match=match,
        from_event_id=from_event_id,
        requested_by=requested_by,
        reason=reason.strip(),
    )
    transaction.on_commit(lambda: replay_job_enqueue(job_id=job.pk), robust=True)
    return job


def replay_job_enqueue(*, job_id: int) -> None:
    """Send the job to a worker (or run it now, with eager Celery).

    With the broker down the job stays queued; the ladder's next job, or "Run again" in
    the admin, runs it (``on_commit(robust=True)`` logs the error, the request succeeds).
    """
    from ratings.tasks import run_replay_job_task

    run_replay_job_task.delay(job_id)


def replay_jobs_resend_stale(*, now: datetime, older_than: timedelta = STALE_AFTER) -> int:
    """Send again the oldest job of each ladder still queued ``older_than`` after it was made.

    A job whose message never reached a worker (the broker was down when the decision
    committed) would otherwise wait forever. Sending one that is merely waiting its turn
    is harmless: a run covers every unfinished job of its ladder, and a second finds it done.
    """
    stale = (
        ReplayJob.objects.filter(status=ReplayJobStatus.QUEUED, created_at__lt=now - older_than)
        .order_by("ladder_id", "pk")
        .values_list("ladder_id", "pk")
    )
    oldest: dict[int, int] = {}
    for ladder_id, job_id in stale:
        oldest.setdefault(ladder_id, job_id)
    for job_id in oldest.values():
        replay_job_enqueue(job_id=job_id)
    return len(oldest)


def replay_jobs_end_stale(*, now: datetime, silent_for: timedelta = RUN_STALE_AFTER) -> int:
    """Mark failed, with the reason, each running job whose worker is gone; returns how many.

    A running job's worker renews ``heartbeat_at`` with every progress report; one silent
    for ``silent_for`` is ended, on PostgreSQL only once its ladder's replay lock is free
    (a live run holds it whatever its heartbeat says, and a killed worker's connection
    takes it along). The replay itself was rolled back with that connection, so the
    decision stands and its ratings wait: a redelivered task, or "Run the selected jobs
    again", replays it. Claimed with ``select_for_update(skip_locked=True)``: two sweeps
    at once end each job once.
    """
    cutoff = now - silent_for
    ended = 0
    with transaction.atomic():
        silent = (
            ReplayJob.objects.filter(status=ReplayJobStatus.RUNNING)
            .filter(Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff))
            .select_for_update(skip_locked=True)
            .order_by("ladder_id", "pk")
            .values_list("ladder_id", "pk")
        )
        by_ladder: dict[int, list[int]] = {}
        for ladder_id, job_id in silent:
            by_ladder.setdefault(ladder_id, []).append(job_id)
        for ladder_id, ids in by_ladder.items():
            if not store.ladder_replays_idle(ladder_id):
                continue  # a run holds the lock: alive, just quiet
            ended += ReplayJob.objects.filter(pk__in=ids, status=ReplayJobStatus.RUNNING).update(
                status=ReplayJobStatus.FAILED, error=WORKER_LOST, finished_at=now
            )
    return ended


def replay_job_run(*, job_id: int, retry: bool = False) -> ReplayJob | None:
    """Run the replay ``job_id`` waits for, together with every other unfinished job of its ladder.

    Harmless to run twice: a job already done is left alone. A failure marks the jobs
    failed with the error; a database error when ``retry`` is set (the task has attempts
    left) marks them queued again and re-raises, so Celery retries.
    """
    job = ReplayJob.objects.select_related("ladder").filter(pk=job_id).first()
    if job is None or job.status == ReplayJobStatus.DONE:
        return job
    ladder = job.ladder
    ids: list[int] = [job_id]
    try:
        with transaction.atomic():
            store.ladder_replays_lock(ladder.pk)  # a run of this ladder finishes first
            jobs = list(ReplayJob.objects.unfinished().filter(ladder=ladder).order_by("pk"))
            ids = [item.pk for item in jobs]
            if job_id not in ids:
                return ReplayJob.objects.get(pk=job_id)  # a run that held the lock did it
            starts = [item.from_event_id for item in jobs if item.from_event_id is not None]
            first = min(starts) if len(starts) == len(jobs) else None  # None: a job replays everything
            started = timezone.now()
            with _Progress(ids, now=started) as progress:
                stats = ladder_replay(ladder=ladder, from_event_id=first, progress=progress)
            ReplayJob.objects.filter(pk__in=ids).update(
                status=ReplayJobStatus.DONE,
                started_at=Coalesce("started_at", started),
                finished_at=timezone.now(),
                events_done=stats.events,
                events_total=stats.events,
                error="",
            )
    except Exception as exc:
        again = retry and isinstance(exc, DatabaseError)
        _failed(ids, exc, retry=again)
        if again:
            raise
        logger.exception("replay of ladder %s for jobs %s failed", ladder.slug, ids)
        return ReplayJob.objects.get(pk=job_id)
    logger.info(
        "replayed ladder %s from event %s for jobs %s: %s events, %s players",
        ladder.slug,
        first,
        ids,
        stats.events,
        stats.players,
    )
    return ReplayJob.objects.get(pk=job_id)


def _failed(ids: list[int], exc: BaseException, *, retry: bool) -> None:
    error = f"{type(exc).__name__}: {exc}"[:ERROR_MAX_CHARS]
    status = ReplayJobStatus.QUEUED if retry else ReplayJobStatus.FAILED
    try:
        ReplayJob.objects.filter(pk__in=ids).exclude(status=ReplayJobStatus.DONE).update(
            status=status, error=error, finished_at=None if retry else timezone.now()
        )
    except DatabaseError:  # the database itself is what failed; the job stays as the last run left it
        logger.exception("could not record the failure of replay jobs %s", ids)


class _Progress:
    """Marks the jobs running and reports how far the replay is, through a connection of its own.

    The replay runs in one long transaction, so nothing it writes shows until it
    commits; these updates commit at once. ``ladder_replay`` reports every 10,000
    events, so a replay of a million matches costs about a hundred small updates. Only on
    PostgreSQL (a second SQLite writer would wait for the replay's lock); a failure here
    is logged and never stops the replay.
    """

    def __init__(self, ids: list[int], *, now: Any) -> None:
        self.ids = ids
        self.now = now
        self._db: Any = None

    def __enter__(self) -> _Progress:
        self._db = store.progress_connection()
        if self._db is not None:
            self._execute(
                sql.JOB_START_SQL,
                {"ids": self.ids, "now": self.now, "running": ReplayJobStatus.RUNNING, "done": ReplayJobStatus.DONE},
            )
        return self

    def __call__(self, done: int, total: int) -> None:
        self._execute(sql.JOB_PROGRESS_SQL, {"ids": self.ids, "done": done, "total": total})

    def _execute(self, sql: str, params: dict[str, Any] | None) -> None:
        if self._db is None:
            return
        try:
            # Each report in a transaction of its own with its lock timeout: a session's SET
            # would stay on the server connection, which a pooler in transaction mode (PgBouncer)
            # hands to other clients after each transaction.
            with self._db.cursor() as cursor, self._db.wrap_database_errors, self._db.connection.transaction():
                cursor.execute("SET LOCAL lock_timeout = '2s'")
                cursor.execute(sql, params)
        except DatabaseError:
            logger.warning("replay progress of jobs %s not recorded", self.ids, exc_info=True)
            self.__exit__()

    def __exit__(self, *exc: object) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            db.close()


def replay_job_for_match(*, match: Match) -> ReplayJob | None:
    """The unfinished job whose replay will recompute ``match``'s ratings, if any (one query).

    A job covers the match when it is about the match, or its replay starts at or before
    the match's rating event.
    """
    event = RatingEvent.objects.filter(match_id=match.pk).values("pk")[:1]
    return (
        ReplayJob.objects.unfinished()
        .filter(ladder_id=match.ladder_id)
        .filter(Q(match_id=match.pk) | Q(from_event__isnull=True) | Q(from_event_id__lte=Subquery(event)))
        .order_by("pk")
        .first()
    )
