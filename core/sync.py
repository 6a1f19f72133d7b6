"""Groups, their permissions and the periodic tasks, made to match a declaration after each migrate.

A site's groups and its schedule are rows, not schema: writing a data migration for each
change repeated the same two helpers in every app. Instead an app declares them once
(``accounts.sync``) and a ``post_migrate`` receiver calls :func:`site_sync`, which is
idempotent: a second run, or a run on a database that already matches, writes nothing.

What the sync owns and what a moderator owns:

- A group gets every permission it is declared with and loses those declared revoked; a
  permission given to it by hand in the admin is left alone.
- A periodic task missing by name is created with its declared schedule. One that exists
  keeps whatever a moderator set in the admin (its schedule, whether it is enabled, its
  expiry): a self-hoster who moves the nightly run keeps that time through every upgrade.
  Only what the code owns is brought up to date: the task's dotted path and description.

This module imports no app: it reads nothing but what it is handed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission
from django.db import connections, transaction
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask

REQUIRED_TABLES = frozenset(
    {
        Group._meta.db_table,
        Permission._meta.db_table,
        PeriodicTask._meta.db_table,
        IntervalSchedule._meta.db_table,
        CrontabSchedule._meta.db_table,
    }
)


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """A group and its permissions, each as ``"app_label.codename"``."""

    name: str
    permissions: tuple[str, ...]
    revoked: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Every:
    """An interval schedule: every ``every`` ``period`` (``"seconds"``, ``"minutes"`` …)."""

    every: int
    period: str


@dataclass(frozen=True, slots=True)
class Crontab:
    """A crontab schedule, read in ``timezone``."""

    minute: str
    hour: str = "*"
    day_of_week: str = "*"
    day_of_month: str = "*"
    month_of_year: str = "*"
    timezone: str = "UTC"


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """A periodic task, found by its name (what the admin lists)."""

    name: str
    task: str
    schedule: Every | Crontab
    expire_seconds: int
    description: str


@dataclass(frozen=True, slots=True)
class SiteSpec:
    groups: tuple[GroupSpec, ...]
    tasks: tuple[TaskSpec, ...]


def _found(wanted: set[str], *, using: str) -> dict[str, Permission]:
    return {
        f"{permission.content_type.app_label}.{permission.codename}": permission
        for permission in Permission.objects.using(using)
        .select_related("content_type")
        .filter(codename__in={label.partition(".")[2] for label in wanted})
        if f"{permission.content_type.app_label}.{permission.codename}" in wanted
    }


def _permissions(labels: Iterable[str], *, using: str) -> list[Permission]:
    """The permissions named ``app_label.codename``; a name that matches none is an error, not a silent skip."""
    wanted = set(labels)
    found = _found(wanted, using=using)
    if len(found) < len(wanted):
        # Django makes each app's permissions in that app's own post_migrate: some may be due still.
        for app_config in global_apps.get_app_configs():
            create_permissions(app_config, verbosity=0, using=using)
        found = _found(wanted, using=using)
    missing = sorted(wanted - set(found))
    if missing:
        raise LookupError(f"permissions must exist to be granted, got unknown {', '.join(missing)}")
    return [found[label] for label in sorted(found)]


def groups_sync(groups: Iterable[GroupSpec], *, using: str) -> int:
    """Creates each group and gives it its permissions, taking back the revoked ones; returns the rows changed."""
    changed = 0
    for spec in groups:
        group, created = Group.objects.using(using).get_or_create(name=spec.name)
        changed += created
        held = set(group.permissions.values_list("pk", flat=True))
        granted = [p for p in _permissions(spec.permissions, using=using) if p.pk not in held]
        taken = [p for p in _permissions(spec.revoked, using=using) if p.pk in held]
        if granted:
            group.permissions.add(*granted)
        if taken:
            group.permissions.remove(*taken)
        changed += len(granted) + len(taken)
    return changed


def _schedule(schedule: Every | Crontab, *, using: str) -> dict[str, IntervalSchedule | CrontabSchedule]:
    if isinstance(schedule, Every):
        interval, _ = IntervalSchedule.objects.using(using).get_or_create(every=schedule.every, period=schedule.period)
        return {"interval": interval}
    crontab, _ = CrontabSchedule.objects.using(using).get_or_create(
        minute=schedule.minute,
        hour=schedule.hour,
        day_of_week=schedule.day_of_week,
        day_of_month=schedule.day_of_month,
        month_of_year=schedule.month_of_year,
        timezone=schedule.timezone,
    )
    return {"crontab": crontab}


def periodic_tasks_sync(tasks: Iterable[TaskSpec], *, using: str) -> int:
    """Creates the missing periodic tasks; updates only the dotted path and description of the others.

    Saving through the model touches django-celery-beat's change marker, so a running beat
    reloads its schedule; nothing is saved when nothing differs.
    """
    tasks = list(tasks)
    by_name = {task.name: task for task in PeriodicTask.objects.using(using).filter(name__in=[t.name for t in tasks])}
    changed = 0
    for spec in tasks:
        existing = by_name.get(spec.name)
        if existing is None:
            PeriodicTask.objects.using(using).create(
                name=spec.name,
                task=spec.task,
                expire_seconds=spec.expire_seconds,
                description=spec.description,
                **_schedule(spec.schedule, using=using),
            )
            changed += 1
        elif (existing.task, existing.description) != (spec.task, spec.description):
            existing.task, existing.description = spec.task, spec.description
            existing.save(update_fields=["task", "description"])
            changed += 1
    return changed


def site_sync(site: SiteSpec, *, using: str = "default") -> int:
    """Makes the database's groups and periodic tasks match ``site``; returns the rows changed.

    Does nothing on a database whose auth or django-celery-beat tables do not exist yet
    (``migrate`` run for one app on an empty database).
    """
    if not REQUIRED_TABLES.issubset(connections[using].introspection.table_names()):
        return 0
    with transaction.atomic(using=using):
        return groups_sync(site.groups, using=using) + periodic_tasks_sync(site.tasks, using=using)
