"""Creates the hourly task that closes due seasons, and lets moderators manage seasons.

Like ladder's 0006: the schedule lives in django-celery-beat's tables, so moderators can
pause or move it in the admin; running the migration again changes nothing.
"""

from django.db import migrations
from django.utils import timezone

CLOSE = "Close seasons whose end has passed (hourly; catches up missed seasons oldest first)"

MODERATOR_PERMISSIONS = {
    "seasons": [
        "view_season",
        "add_season",
        "change_season",
        "view_seasonsettings",
        "add_seasonsettings",
        "change_seasonsettings",
        "view_badgetier",
        "add_badgetier",
        "change_badgetier",
        "delete_badgetier",
        "view_seasonstanding",
        "view_badge",
    ],
}


def create_task(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTasks = apps.get_model("django_celery_beat", "PeriodicTasks")
    hourly, _ = CrontabSchedule.objects.get_or_create(
        minute="5", hour="*", day_of_week="*", day_of_month="*", month_of_year="*", timezone="UTC"
    )
    PeriodicTask.objects.get_or_create(
        name=CLOSE,
        defaults={
            "task": "seasons.tasks.close_due_seasons_task",
            "crontab": hourly,
            "expire_seconds": 3_600,
            "description": "Every hour, closes each season whose end has passed: archives its standings, awards "
            "badges, applies the ladder's soft reset, tells the ranked players, starts the next season.",
        },
    )
    PeriodicTasks.objects.update_or_create(ident=1, defaults={"last_update": timezone.now()})


def delete_task(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=CLOSE).delete()


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
        ("seasons", "0001_initial"),
        ("ladder", "0006_periodic_tasks"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [
        migrations.RunPython(create_task, delete_task),
        migrations.RunPython(grant, revoke),
    ]
