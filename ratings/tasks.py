"""Celery tasks of the ratings domain: thin wrappers over services, safe to run twice."""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.utils import timezone

from core.tasks import RETRY
from ratings.replay_jobs import replay_job_run, replay_jobs_end_stale, replay_jobs_resend_stale

logger = logging.getLogger(__name__)


@shared_task(bind=True, **RETRY)
def run_replay_job_task(self: Task, job_id: int) -> str | None:
    """Replay a ladder for the replay job ``job_id`` (and every other unfinished job of that ladder).

    Database errors are retried with backoff, the job shown as queued meanwhile; the last
    attempt, or any other error, leaves it failed with the error. Run inline (eager
    Celery) it never retries, so the request that enqueued it still answers.
    """
    retries_left = self.max_retries is None or self.request.retries < self.max_retries  # None: retried forever
    final = self.request.is_eager or not retries_left
    job = replay_job_run(job_id=job_id, retry=not final)
    if job is None:
        logger.warning("replay job %s does not exist", job_id)
        return None
    logger.info("replay job %s: %s", job.pk, job.status)
    return job.status


@shared_task(**RETRY)
def resend_stale_replay_jobs_task() -> int:
    """Every few minutes: send again replay jobs whose message never reached a worker."""
    count = replay_jobs_resend_stale(now=timezone.now())
    if count:
        logger.warning("sent %s replay jobs left queued to a worker again", count)
    return count


@shared_task(**RETRY)
def end_stale_jobs_task() -> int:
    """Every 5 minutes: mark failed the backtests and replay jobs whose worker was lost."""
    from ratings.backtests import backtests_end_stale

    now = timezone.now()
    backtests, replays = backtests_end_stale(now=now), replay_jobs_end_stale(now=now)
    if backtests or replays:
        logger.warning("ended %s backtests and %s replay jobs whose worker was lost", backtests, replays)
    return backtests + replays


@shared_task(**RETRY)
def run_backtest_task(backtest_id: int) -> str | None:
    """Run the prediction-quality backtest ``backtest_id`` (``ratings.backtests``); a finished one is left alone."""
    from ratings.backtests import backtest_run

    backtest = backtest_run(backtest_id=backtest_id)
    if backtest is None:
        logger.warning("backtest %s does not exist", backtest_id)
        return None
    logger.info("backtest %s: %s", backtest.pk, backtest.status)
    return backtest.status
