"""Creates the periodic tasks in django-celery-beat's tables and lets moderators edit them.

Schedules live in the database, not in settings, so moderators can change or pause them
in the admin and beat picks the change up without a deploy. Each task expires after its
own period, so a worker that was down does not come back to a pile of stale sweeps.
Running the migration again (or on a database that already has the tasks) changes
nothing: rows are looked up by name and left as moderators set them.
"""

from django.db import migrations
from django.utils import timezone

NIGHTLY = "Nightly job: materialise RDs and snapshot leaderboards (hourly; each ladder at its own midnight)"
SWEEP = "Matchmaking queue sweep"
CONFIRM = "Auto-confirm unanswered results"

MODERATOR_PERMISSIONS = {
    "django_celery_beat": [
        "view_periodictask",
        "change_periodictask",
        "view_intervalschedule",
        "add_intervalschedule",
        "change_intervalschedule",
        "view_crontabschedule",
        "add_crontabschedule",
        "change_crontabschedule",
    ],
    "ladder": ["view_nightlyrun", "view_leaderboardsnapshot", "view_snapshotentry"],
}


def create_tasks(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTasks = apps.get_model("django_celery_beat", "PeriodicTasks")

    every_15s, _ = IntervalSchedule.objects.get_or_create(every=15, period="seconds")
    every_5m, _ = IntervalSchedule.objects.get_or_create(every=5, period="minutes")
    hourly, _ = CrontabSchedule.objects.get_or_create(
        minute="0", hour="*", day_of_week="*", day_of_month="*", month_of_year="*", timezone="UTC"
    )
    PeriodicTask.objects.get_or_create(
        name=NIGHTLY,
        defaults={
            "task": "ladder.tasks.run_nightly_task",
            "crontab": hourly,
            "expire_seconds": 3_600,
            "description": "Every hour, handles each ladder whose local midnight has passed since its last run: "
            "writes every RD back at that midnight and snapshots the leaderboard. A missed night is caught up by "
            "the next run.",
        },
    )
    PeriodicTask.objects.get_or_create(
        name=SWEEP,
        defaults={
            "task": "matchmaking.tasks.sweep_queue_task",
            "interval": every_15s,
            "expire_seconds": 15,
            "description": "Ends searches past the ladder's queue timeout and drops players whose page stopped polling.",
        },
    )
    PeriodicTask.objects.get_or_create(
        name=CONFIRM,
        defaults={
            "task": "ladder.tasks.confirm_overdue_matches_task",
            "interval": every_5m,
            "expire_seconds": 300,
            "description": "Confirms and rates results nobody answered within the ladder's confirmation window.",
        },
    )
    # Tells a running beat to reload its schedule (django-celery-beat's change marker).
    PeriodicTasks.objects.update_or_create(ident=1, defaults={"last_update": timezone.now()})


def delete_tasks(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name__in=[NIGHTLY, SWEEP, CONFIRM]).delete()


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="moderators")
    for app_label, codenames in MODERATOR_PERMISSIONS.items():
        group.permissions.add(*Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="moderators").first()
    if group:
        for app_label, codenames in MODERATOR_PERMISSIONS.items():
            group.permissions.remove(
                *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
            )


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0005_ratings_fillfactor"),
        ("accounts", "0003_moderators_match_permissions"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [
        migrations.RunPython(create_tasks, delete_tasks),
        migrations.RunPython(grant, revoke),
    ]
