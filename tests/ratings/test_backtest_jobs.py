"""Backtests and replay jobs whose worker was lost are ended by a sweep; one backtest at a time.

The guard's tests start backtests from real threads, each with its own PostgreSQL
connection, all at once: the partial unique constraint lets exactly one insert through.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from ladder.matches import decisions as moderation
from ratings import sql
from ratings.backtests import (
    ALREADY_RUNNING,
    NEVER_STARTED,
    WORKER_LOST,
    BacktestUnderWay,
    backtest_request,
    backtest_run,
    backtests_end_stale,
)
from ratings.models import Backtest, BacktestStatus, ReplayJob, ReplayJobStatus
from ratings.replay_jobs import WORKER_LOST as REPLAY_WORKER_LOST
from ratings.replay_jobs import replay_jobs_end_stale
from ratings.tasks import end_stale_jobs_task, run_replay_job_task
from tests.factories import LadderFactory, member
from tests.ratings.test_backtests_service import play
from tests.ratings.test_replay_jobs import assert_equals_a_full_replay, season


def threads_at_once(count: int, work) -> list[BaseException]:
    """Run ``work(index)`` in ``count`` threads released together; the errors they raised."""
    start = threading.Barrier(count)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        start.wait()
        try:
            work(index)
        except BaseException as exc:  # reported by the caller
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


# One at a time ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_eight_clicks_at_once_start_one_backtest(root):
    ladder = LadderFactory()
    url = reverse("admin:ladder_ladder_prediction_quality", args=[ladder.pk])
    answers: list[str] = []

    def click(index: int) -> None:
        client = Client()
        client.force_login(root)
        response = client.post(url, {"_run": "Run a backtest now"}, follow=True)
        answers.append(response.text)

    assert threads_at_once(8, click) == []

    assert Backtest.objects.filter(ladder=ladder).count() == 1
    assert sum(ALREADY_RUNNING.replace("'", "&#x27;") in text for text in answers) == 7


@pytest.mark.django_db(transaction=True)
def test_a_start_waits_for_an_uncommitted_one_and_is_then_refused(root):
    ladder = LadderFactory()
    inserted, go_on = threading.Event(), threading.Event()
    outcome: list[str] = []

    def first(index: int) -> None:
        with transaction.atomic():
            backtest_request(ladder=ladder, requested_by=None)
            inserted.set()
            go_on.wait(timeout=30)  # still uncommitted while the second one tries

    def second(index: int) -> None:
        inserted.wait(timeout=30)
        threading.Timer(0.5, go_on.set).start()
        try:
            backtest_request(ladder=ladder, requested_by=None)
        except BacktestUnderWay as refused:
            outcome.append(str(refused))

    assert threads_at_once(2, lambda index: (first, second)[index](index)) == []

    assert outcome == [ALREADY_RUNNING]
    assert Backtest.objects.filter(ladder=ladder).count() == 1


@pytest.mark.django_db
def test_a_finished_backtest_lets_the_next_one_start(moderator):
    ladder = LadderFactory()
    Backtest.objects.create(ladder=ladder, status=BacktestStatus.DONE)
    Backtest.objects.create(ladder=ladder, status=BacktestStatus.FAILED)

    backtest = backtest_request(ladder=ladder, requested_by=moderator)

    assert backtest.status == BacktestStatus.QUEUED
    with pytest.raises(BacktestUnderWay):
        backtest_request(ladder=ladder, requested_by=moderator)


# The sweep: backtests ------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_sweep_ends_backtests_silent_too_long_and_queued_for_an_hour():
    now = timezone.now()
    silent = Backtest.objects.create(
        ladder=LadderFactory(), status=BacktestStatus.RUNNING, heartbeat_at=now - timedelta(minutes=6)
    )
    alive = Backtest.objects.create(
        ladder=LadderFactory(), status=BacktestStatus.RUNNING, heartbeat_at=now - timedelta(minutes=1)
    )
    lost = Backtest.objects.create(ladder=LadderFactory(), created_at=now - timedelta(minutes=61))
    waiting = Backtest.objects.create(ladder=LadderFactory(), created_at=now - timedelta(minutes=20))

    assert backtests_end_stale(now=now) == 2
    assert backtests_end_stale(now=now) == 0

    found = {row.pk: row for row in Backtest.objects.all()}
    assert (found[silent.pk].status, found[silent.pk].error, found[silent.pk].finished_at) == (
        "failed",
        WORKER_LOST,
        now,
    )
    assert (found[lost.pk].status, found[lost.pk].error) == ("failed", NEVER_STARTED)
    assert found[alive.pk].status == "running" and found[waiting.pk].status == "queued"


@pytest.mark.django_db
def test_an_ended_backtest_is_not_run_by_a_redelivered_task_and_the_ladder_may_start_another(moderator):
    ladder = LadderFactory()
    backtest = backtest_request(ladder=ladder, requested_by=moderator)
    Backtest.objects.filter(pk=backtest.pk).update(
        status=BacktestStatus.RUNNING, heartbeat_at=timezone.now() - timedelta(minutes=10)
    )

    assert end_stale_jobs_task() == 1
    assert backtest_run(backtest_id=backtest.pk).status == BacktestStatus.FAILED  # the late redelivery

    again = backtest_request(ladder=ladder, requested_by=moderator)
    assert again.status == BacktestStatus.QUEUED


@pytest.mark.django_db
def test_a_backtest_claimed_by_one_run_is_left_to_it_by_a_second():
    backtest = Backtest.objects.create(ladder=LadderFactory(), status=BacktestStatus.RUNNING, progress=0.4)

    assert backtest_run(backtest_id=backtest.pk).status == BacktestStatus.RUNNING

    backtest.refresh_from_db()
    assert backtest.progress == 0.4


@pytest.mark.django_db
def test_a_running_backtest_renews_its_heartbeat(moderator):
    ladder = LadderFactory()
    play(ladder, moderator, games=40)
    backtest = Backtest.objects.create(ladder=ladder)
    start = timezone.now()
    ticks = iter(range(10_000))
    beats: list = []

    def clock():  # each look at the clock is 40 s later; it also notes the heartbeat written so far
        written = Backtest.objects.values_list("heartbeat_at", flat=True).get(pk=backtest.pk)
        if written is not None and (not beats or beats[-1] != written):
            beats.append(written)
        return start + timedelta(seconds=40 * next(ticks))

    assert backtest_run(backtest_id=backtest.pk, now=clock).status == BacktestStatus.DONE

    assert len(beats) >= 3 and beats == sorted(beats) and beats[0] == start


# The sweep: replay jobs --------------------------------------------------------------------


@pytest.fixture
def league(db, moderator):
    ladder = LadderFactory(name="League", slug="league")
    players = [member(ladder, f"p{n}") for n in range(6)]
    return ladder, season(ladder, moderator, players, games=30, seed="stale")


def backend_ended(pid: int) -> None:
    """Wait until the server has ended the backend ``pid``: a closed client's backend exits a moment later.

    The test runs in a transaction, and PostgreSQL reads the other backends' status once per
    transaction: each look clears that snapshot first, or it would show the backend forever."""
    deadline = time.monotonic() + 30
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.01)
    raise AssertionError(f"backend {pid} still running 30 s after its client closed")


def voided(league, moderator, django_capture_on_commit_callbacks) -> ReplayJob:
    _, matches = league
    with django_capture_on_commit_callbacks():  # decided; its replay not run yet
        return moderation.match_void(match=matches[5], moderator=moderator, reason="duplicate").job


@pytest.mark.django_db
def test_a_replay_whose_worker_was_killed_is_ended_and_a_redelivery_still_replays_it(
    league, moderator, django_capture_on_commit_callbacks
):
    ladder, _ = league
    job = voided(league, moderator, django_capture_on_commit_callbacks)
    worker = connections.create_connection(DEFAULT_DB_ALIAS)  # the worker's own connection
    with worker.cursor() as cursor:
        cursor.execute("BEGIN")
        cursor.execute(sql.JOB_LOCK_SQL, [sql.REPLAY_LOCK, ladder.pk])
        cursor.execute("SELECT pg_backend_pid()")
        worker_pid = cursor.fetchone()[0]
    ReplayJob.objects.filter(pk=job.pk).update(
        status=ReplayJobStatus.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now() - timedelta(minutes=6)
    )

    assert replay_jobs_end_stale(now=timezone.now()) == 0  # quiet, but its run holds the lock: alive
    worker.close()  # killed: PostgreSQL ends its transaction and frees the lock
    backend_ended(worker_pid)
    assert replay_jobs_end_stale(now=timezone.now()) == 1

    job.refresh_from_db()
    assert (job.status, job.error) == (ReplayJobStatus.FAILED, REPLAY_WORKER_LOST)
    assert run_replay_job_task(job.pk) == ReplayJobStatus.DONE
    assert_equals_a_full_replay(ladder)


@pytest.mark.django_db
def test_a_replay_reporting_progress_is_left_running(league, moderator, django_capture_on_commit_callbacks):
    job = voided(league, moderator, django_capture_on_commit_callbacks)
    ReplayJob.objects.filter(pk=job.pk).update(
        status=ReplayJobStatus.RUNNING, started_at=timezone.now() - timedelta(minutes=8), heartbeat_at=timezone.now()
    )

    assert replay_jobs_end_stale(now=timezone.now()) == 0
    assert ReplayJob.objects.get(pk=job.pk).status == ReplayJobStatus.RUNNING


@pytest.mark.django_db
def test_the_migrations_schedule_the_sweep_every_five_minutes():
    task = PeriodicTask.objects.select_related("interval").get(task="ratings.tasks.end_stale_jobs_task")

    assert task.enabled and (task.interval.every, task.interval.period, task.expire_seconds) == (5, "minutes", 300)
