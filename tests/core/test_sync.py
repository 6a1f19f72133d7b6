"""core.sync: groups and periodic tasks made to match a declaration, keeping what moderators edit."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask, PeriodicTasks

from core.sync import Crontab, Every, GroupSpec, SiteSpec, TaskSpec, site_sync

pytestmark = pytest.mark.django_db

NIGHTLY = TaskSpec(
    name="Nightly (test)",
    task="ladder.tasks.run_nightly_task",
    schedule=Crontab(minute="0"),
    expire_seconds=3_600,
    description="Every hour.",
)
SWEEP = TaskSpec(
    name="Sweep (test)",
    task="matchmaking.tasks.sweep_queue_task",
    schedule=Every(15, "seconds"),
    expire_seconds=15,
    description="Every 15 seconds.",
)
EDITORS = GroupSpec(
    name="editors (test)",
    permissions=("ladder.view_ladder", "ladder.change_ladder"),
    revoked=("accounts.change_user",),
)
SITE = SiteSpec(groups=(EDITORS,), tasks=(NIGHTLY, SWEEP))


def held(group_name: str) -> set[str]:
    group = Group.objects.get(name=group_name)
    return {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.select_related("content_type")}


def test_sync_creates_the_group_and_the_tasks_with_their_schedules():
    assert site_sync(SITE) == 1 + 2 + 2

    assert held(EDITORS.name) == {"ladder.view_ladder", "ladder.change_ladder"}
    nightly = PeriodicTask.objects.select_related("crontab").get(name=NIGHTLY.name)
    assert (nightly.task, nightly.crontab.minute, nightly.crontab.hour, str(nightly.crontab.timezone)) == (
        NIGHTLY.task,
        "0",
        "*",
        "UTC",
    )
    assert (nightly.expire_seconds, nightly.description, nightly.enabled) == (3_600, "Every hour.", True)
    sweep = PeriodicTask.objects.select_related("interval").get(name=SWEEP.name)
    assert (sweep.interval.every, sweep.interval.period, sweep.expire_seconds) == (15, "seconds", 15)


def test_a_second_sync_writes_nothing():
    site_sync(SITE)
    tasks = list(PeriodicTask.objects.order_by("pk").values())
    schedules = (IntervalSchedule.objects.count(), CrontabSchedule.objects.count())
    marker = PeriodicTasks.objects.get().last_update

    assert site_sync(SITE) == 0
    assert list(PeriodicTask.objects.order_by("pk").values()) == tasks
    assert (IntervalSchedule.objects.count(), CrontabSchedule.objects.count()) == schedules
    assert PeriodicTasks.objects.get().last_update == marker


def test_a_schedule_a_moderator_edited_is_kept():
    """A self-hoster who moves the nightly run to 03:30 and pauses the sweep keeps both through upgrades."""
    site_sync(SITE)
    half_past_three, _ = CrontabSchedule.objects.get_or_create(minute="30", hour="3", timezone="Europe/Berlin")
    PeriodicTask.objects.filter(name=NIGHTLY.name).update(crontab=half_past_three, expire_seconds=600)
    PeriodicTask.objects.filter(name=SWEEP.name).update(enabled=False)

    assert site_sync(SITE) == 0

    nightly = PeriodicTask.objects.get(name=NIGHTLY.name)
    assert (nightly.crontab_id, nightly.expire_seconds) == (half_past_three.pk, 600)
    assert not PeriodicTask.objects.get(name=SWEEP.name).enabled


def test_the_code_owned_path_and_description_are_brought_up_to_date_and_beat_told():
    site_sync(SITE)
    marker = PeriodicTasks.objects.get().last_update
    PeriodicTask.objects.filter(name=NIGHTLY.name).update(task="ladder.old_tasks.nightly", description="old")

    assert site_sync(SITE) == 1

    nightly = PeriodicTask.objects.get(name=NIGHTLY.name)
    assert (nightly.task, nightly.description) == (NIGHTLY.task, NIGHTLY.description)
    assert PeriodicTasks.objects.get().last_update > marker


def test_a_deleted_task_comes_back():
    site_sync(SITE)
    PeriodicTask.objects.filter(name=SWEEP.name).delete()

    assert site_sync(SITE) == 1
    assert PeriodicTask.objects.filter(name=SWEEP.name, task=SWEEP.task).exists()


def test_a_group_gets_back_what_it_lacks_keeps_what_was_added_by_hand_and_loses_the_revoked():
    site_sync(SITE)
    group = Group.objects.get(name=EDITORS.name)
    group.permissions.remove(Permission.objects.get(content_type__app_label="ladder", codename="change_ladder"))
    group.permissions.add(
        Permission.objects.get(content_type__app_label="ladder", codename="view_match"),
        Permission.objects.get(content_type__app_label="accounts", codename="change_user"),
    )

    assert site_sync(SITE) == 2
    assert held(EDITORS.name) == {"ladder.view_ladder", "ladder.change_ladder", "ladder.view_match"}


def test_a_permission_that_does_not_exist_is_an_error_not_a_silent_skip():
    typo = GroupSpec(name="editors (test)", permissions=("ladder.view_ladder", "ladder.veiw_match"))

    with pytest.raises(LookupError, match=r"unknown ladder\.veiw_match"):
        site_sync(SiteSpec(groups=(typo,), tasks=()))
    assert not Group.objects.filter(name=typo.name).exists()
