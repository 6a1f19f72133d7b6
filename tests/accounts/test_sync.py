"""accounts.sync: the moderators' group and the periodic tasks, made after every migrate.

``tests/fixtures/migrated_site.json`` is what a fresh ``migrate`` made when one data
migration per change did this work (taken from such a database before they were emptied):
the test database, made by ``migrate`` with the sync instead, must hold exactly that.
A change to ``accounts.sync.SITE`` changes that file in the same commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management.sql import emit_post_migrate_signal
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask, PeriodicTasks

from accounts.sync import SITE
from core.sync import site_sync

MIGRATED = Path(__file__).resolve().parent.parent / "fixtures" / "migrated_site.json"

pytestmark = pytest.mark.django_db


def crontab_text(crontab: CrontabSchedule) -> str:
    fields = (crontab.minute, crontab.hour, crontab.day_of_month, crontab.month_of_year, crontab.day_of_week)
    return f"{' '.join(fields)} {crontab.timezone}"


def site_snapshot() -> dict[str, Any]:
    """The groups with their permissions, the periodic tasks and the schedules, by value (no ids)."""
    tasks = []
    for task in PeriodicTask.objects.select_related("interval", "crontab").order_by("name"):
        tasks.append(
            {
                "name": task.name,
                "task": task.task,
                "schedule": f"every {task.interval.every} {task.interval.period}"
                if task.interval
                else crontab_text(task.crontab),
                "expire_seconds": task.expire_seconds,
                "description": task.description,
                "enabled": task.enabled,
                "one_off": task.one_off,
                "args": task.args,
                "kwargs": task.kwargs,
                "queue": task.queue,
                "solar_or_clocked": [task.solar_id, task.clocked_id],
                "expires_start_last_run": [str(task.expires), str(task.start_time), str(task.last_run_at)],
                "total_run_count": task.total_run_count,
            }
        )
    return {
        "groups": {
            group.name: sorted(
                f"{p.content_type.app_label}.{p.codename} ({p.name})"
                for p in group.permissions.select_related("content_type")
            )
            for group in Group.objects.order_by("name")
        },
        "tasks": tasks,
        "intervals": sorted(f"every {i.every} {i.period}" for i in IntervalSchedule.objects.all()),
        "crontabs": sorted(crontab_text(c) for c in CrontabSchedule.objects.all()),
        "beat_change_markers": PeriodicTasks.objects.count(),
    }


def test_a_fresh_migrate_makes_what_the_data_migrations_made():
    assert site_snapshot() == json.loads(MIGRATED.read_text())


def test_a_second_sync_changes_nothing_and_does_not_wake_beat():
    before = site_snapshot()
    marker = PeriodicTasks.objects.get().last_update

    assert site_sync(SITE) == 0
    assert site_sync(SITE) == 0
    assert site_snapshot() == before
    assert PeriodicTasks.objects.get().last_update == marker


def test_every_migrate_puts_back_what_is_missing():
    Group.objects.filter(name="moderators").delete()
    PeriodicTask.objects.filter(task="ladder.tasks.run_nightly_task").delete()

    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")

    assert site_snapshot() == json.loads(MIGRATED.read_text())


def test_moderators_cannot_change_accounts_even_when_given_the_permission_by_hand():
    moderators = Group.objects.get(name="moderators")
    change_user = Permission.objects.get(content_type__app_label="accounts", codename="change_user")
    moderators.permissions.add(change_user)

    assert site_sync(SITE) == 1
    assert not moderators.permissions.filter(pk=change_user.pk).exists()
