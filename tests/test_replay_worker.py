"""A void's replay job through a real Celery worker and Redis, as in production.

The request-side code runs here; the replay runs in a ``celery worker`` subprocess on the
suite's test database (``tests.test_celery_worker`` starts it, on a queue of its own).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.matches import decisions as moderation
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ratings import replay_jobs
from ratings.models import PlayerRating, ReplayJob
from ratings.services import ladder_replay
from ratings.tasks import run_replay_job_task
from tests.factories import LadderFactory, member
from tests.test_celery_worker import celery, queue, wait_for  # noqa: F401 (queue is a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_real_worker_replays_a_void_after_the_request_returned(queue, tmp_path, moderator_anywhere, monkeypatch):  # noqa: F811
    ladder = LadderFactory(name="Worked")
    players = [member(ladder, f"w{n}") for n in range(4)]
    clock = timezone.now() - timedelta(days=5)
    matches = []
    for n in range(12):
        clock += timedelta(hours=3)
        sides = [SideInput([players[n % 4]], 1), SideInput([players[(n + 1) % 4]], 2)]
        matches.append(
            svc.match_report(ladder=ladder, reporter=moderator_anywhere, sides=sides, played_at=clock, now=clock)
        )
    before = {row.pk: row.rating for row in PlayerRating.objects.filter(ladder=ladder)}
    # The decision's commit sends the job to this test's worker queue.
    monkeypatch.setattr(
        replay_jobs, "replay_job_enqueue", lambda *, job_id: run_replay_job_task.apply_async([job_id], queue=queue)
    )
    assert not run_replay_job_task.app.conf.task_always_eager, "the task must go through the broker"

    job = moderation.match_void(match=matches[2], moderator=moderator_anywhere, reason="wrong opponent").job

    assert ReplayJob.objects.get(pk=job.pk).status == "queued"  # the request returned before any replay
    assert {row.pk: row.rating for row in PlayerRating.objects.filter(ladder=ladder)} == before
    with celery("worker", queue, tmp_path):
        wait_for(lambda: ReplayJob.objects.get(pk=job.pk).status == "done", "the worker's replay", tmp_path)

    job.refresh_from_db()
    assert job.started_at and job.finished_at and job.events_done == job.events_total == 9
    live = {row.pk: (row.rating, row.rd, row.games) for row in PlayerRating.objects.filter(ladder=ladder)}
    ladder_replay(ladder=ladder)
    assert live == {row.pk: (row.rating, row.rd, row.games) for row in PlayerRating.objects.filter(ladder=ladder)}
    assert "Task ratings.tasks.run_replay_job_task[" in (tmp_path / "worker.log").read_text()
