"""The Celery side of the nightly job: the hourly task, the schedules in the database, the admin."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from api.tasks import expire_idempotency_keys_task
from ladder import tasks
from ladder.models import NightlyRun
from ladder.standings.nightly import ladder_nightly, local_midnight
from ladder.tasks import run_ladder_nightly_task, run_nightly_task
from matchmaking.tasks import sweep_queue_task
from ratings.models import PlayerRating
from tests.factories import LadderFactory, UserFactory
from tests.ladder.test_nightly import DAY, season

pytestmark = pytest.mark.django_db


def test_a_missed_night_is_caught_up_by_the_next_hourly_run(moderator, celery_eager):
    ladder = LadderFactory()
    start = datetime(2026, 5, 1, tzinfo=UTC)
    season(ladder, moderator, start=start - 8 * DAY, days=6)
    with time_machine.travel(start + timedelta(minutes=5), tick=False):
        assert run_nightly_task() == 1
    with time_machine.travel(start + 2 * DAY + timedelta(hours=3), tick=False):  # beat was down a whole day
        assert run_nightly_task() == 1
        assert run_nightly_task() == 0

    assert list(NightlyRun.objects.values_list("midnight", flat=True)) == [start + 2 * DAY, start]
    assert set(PlayerRating.objects.values_list("rd_as_of", flat=True)) == {start + 2 * DAY}


def test_each_ladder_runs_at_its_own_midnight(celery_eager):
    """Auckland (UTC+12 in June) and Los Angeles (UTC−7): the hourly task finds each one's midnight."""
    auckland = LadderFactory(name="Kiwi", time_zone="Pacific/Auckland")
    los_angeles = LadderFactory(name="Bay", time_zone="America/Los_Angeles")
    first_tick = datetime(2026, 6, 1, 0, 30, tzinfo=UTC)
    for hour in range(25):
        with time_machine.travel(first_tick + timedelta(hours=hour), tick=False):
            run_nightly_task()

    def runs(ladder):
        return [
            (run.date.isoformat(), run.midnight, run.started_at) for run in ladder.nightly_runs.order_by("midnight")
        ]

    assert runs(auckland) == [
        ("2026-06-01", datetime(2026, 5, 31, 12, tzinfo=UTC), first_tick),
        ("2026-06-02", datetime(2026, 6, 1, 12, tzinfo=UTC), datetime(2026, 6, 1, 12, 30, tzinfo=UTC)),
    ]
    assert runs(los_angeles) == [
        ("2026-05-31", datetime(2026, 5, 31, 7, tzinfo=UTC), first_tick),
        ("2026-06-01", datetime(2026, 6, 1, 7, tzinfo=UTC), datetime(2026, 6, 1, 7, 30, tzinfo=UTC)),
    ]
    assert [s.date.isoformat() for s in auckland.snapshots.order_by("date")] == ["2026-06-01", "2026-06-02"]


# Schedules ------------------------------------------------------------------------------


def test_the_migrations_create_the_periodic_tasks():
    schedules = {task.task: task for task in PeriodicTask.objects.select_related("interval", "crontab")}

    nightly = schedules["ladder.tasks.run_nightly_task"]
    assert (nightly.crontab.minute, nightly.crontab.hour, str(nightly.crontab.timezone)) == ("0", "*", "UTC")
    sweep = schedules["matchmaking.tasks.sweep_queue_task"]
    assert (sweep.interval.every, sweep.interval.period) == (15, "seconds")
    confirm = schedules["ladder.tasks.confirm_overdue_matches_task"]
    assert (confirm.interval.every, confirm.interval.period) == (5, "minutes")
    expire = schedules["api.tasks.expire_idempotency_keys_task"]
    assert (expire.crontab.minute, expire.crontab.hour) == ("30", "*")
    assert all(task.enabled for task in schedules.values())
    assert (nightly.expire_seconds, sweep.expire_seconds, confirm.expire_seconds) == (3600, 15, 300)


def test_beat_reads_its_schedule_from_the_database():
    assert settings.CELERY_BEAT_SCHEDULER == "django_celery_beat.schedulers:DatabaseScheduler"
    assert not hasattr(settings, "CELERY_BEAT_SCHEDULE"), "a settings schedule would overwrite the admin's on start"


@pytest.mark.parametrize(
    "task",
    [
        run_nightly_task,
        run_ladder_nightly_task,
        sweep_queue_task,
        tasks.confirm_overdue_matches_task,
        expire_idempotency_keys_task,
    ],
)
def test_tasks_acknowledge_late_and_retry_database_errors_with_backoff(task):
    from django.db import DatabaseError

    assert task.acks_late
    assert DatabaseError in task.autoretry_for
    assert task.retry_backoff and task.max_retries >= 3


def test_moderators_can_change_a_schedule_in_the_admin(moderator_client):
    sweep = PeriodicTask.objects.get(task="matchmaking.tasks.sweep_queue_task")
    url = reverse("admin:django_celery_beat_periodictask_change", args=[sweep.pk])

    assert moderator_client.get(reverse("admin:django_celery_beat_periodictask_changelist")).status_code == 200
    page = moderator_client.get(url)
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    data.update(
        {
            "name": sweep.name,
            "regtask": sweep.task,
            "task": "",
            "interval": sweep.interval_id,
            "enabled": "",  # paused
            "args": "[]",
            "kwargs": "{}",
            "headers": "{}",
            "expire_seconds": 15,
            "priority": "",
            "queue": "",
            "exchange": "",
            "routing_key": "",
            "description": sweep.description,
        }
    )
    data.pop("crontab", None)
    data.pop("solar", None)
    data.pop("clocked", None)
    response = moderator_client.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response
    sweep.refresh_from_db()
    assert not sweep.enabled


def test_staff_without_the_moderator_group_cannot_see_the_schedules(client):
    client.force_login(UserFactory(username="intern", is_staff=True))
    response = client.get(reverse("admin:django_celery_beat_periodictask_changelist"))
    assert response.status_code == 403


def test_moderators_see_when_each_ladder_last_ran(moderator_client):
    ladder = LadderFactory(name="Go")
    never = LadderFactory(name="Shogi")
    midnight = local_midnight(ladder=ladder, at=timezone.now())
    ladder_nightly(ladder=ladder, midnight=midnight)

    listing = moderator_client.get(reverse("admin:ladder_ladder_changelist")).text
    runs = moderator_client.get(reverse("admin:ladder_nightlyrun_changelist"))

    assert f"midnight of {midnight:%Y-%m-%d} (ran " in listing and "not run yet" in listing
    assert runs.status_code == 200
    assert [run.ladder for run in runs.context["cl"].result_list] == [ladder]
    assert never.name in listing
    assert moderator_client.get(reverse("admin:ladder_nightlyrun_add")).status_code == 403
    assert moderator_client.get(reverse("admin:ladder_leaderboardsnapshot_changelist")).status_code == 200


def test_admin_action_runs_the_nightly_job_once(moderator_client):
    ladder = LadderFactory()
    url = reverse("admin:ladder_ladder_changelist")

    first = moderator_client.post(url, {"action": "run_nightly", "_selected_action": [ladder.pk]}, follow=True)
    second = moderator_client.post(url, {"action": "run_nightly", "_selected_action": [ladder.pk]}, follow=True)

    assert "RDs written back at the midnight" in first.text
    assert "already done for" in second.text
    assert NightlyRun.objects.filter(ladder=ladder).count() == 1


def test_a_midnight_already_done_is_logged_as_done_by_the_earlier_run_without_its_figures(caplog):
    ladder = LadderFactory()
    midnight = local_midnight(ladder=ladder, at=timezone.now())
    for user in UserFactory.create_batch(3):
        PlayerRating.objects.create(
            ladder=ladder, player=user, rating=1500, rd=80, volatility=0.06, rd_as_of=midnight - timedelta(days=2)
        )
    first = run_ladder_nightly_task(ladder.pk, midnight.isoformat())
    run = NightlyRun.objects.get(ladder=ladder)
    said: list[str] = []
    caplog.clear()

    with caplog.at_level(logging.INFO, logger="ladder.tasks"):
        second = run_ladder_nightly_task(ladder.pk, midnight.isoformat())
    ladder_nightly(ladder=ladder, midnight=midnight, progress=said.append)

    assert first == {"ran": True, "materialised": 3, "snapshot_rows": run.snapshot_rows}
    assert second == {"ran": False, "done_by_run": run.pk}
    assert [record.getMessage() for record in caplog.records if record.name == "ladder.tasks"] == [
        f"nightly job of {ladder.slug} for {run.date}: already done by run {run.pk}, "
        f"started {run.started_at.isoformat()}; nothing changed"
    ]
    started = run.started_at.astimezone(UTC)
    assert said == [
        f"already done for {run.date} by run {run.pk}, started {started:%Y-%m-%d %H:%M:%S} UTC; nothing changed"
    ]


def test_ladder_task_skips_a_missing_ladder_and_a_refused_midnight():
    ladder = LadderFactory(time_zone="Europe/Berlin")
    assert run_ladder_nightly_task(999_999, "2026-01-01T00:00:00+00:00") == {"ran": False}
    assert run_ladder_nightly_task(ladder.pk, "2026-01-01T00:00:00+00:00") == {"ran": False}  # 01:00 in Berlin
    assert not NightlyRun.objects.exists()
