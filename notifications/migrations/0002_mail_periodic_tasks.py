"""Creates the periodic tasks of notification mails in django-celery-beat's tables.

As in ladder 0006: the schedules live in the database, so moderators can change or pause
them in the admin; each run expires before the next is due, so a worker that was down
does not come back to a pile of stale runs; running it again changes nothing (rows are
looked up by name and left as moderators set them).
"""

from django.db import migrations
from django.utils import timezone

MAILS = "Notification mails (every minute; a safety net for the kick each notification sends)"
DIGESTS = "Daily notification digest (07:00 UTC)"


def create_tasks(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTasks = apps.get_model("django_celery_beat", "PeriodicTasks")

    every_minute, _ = IntervalSchedule.objects.get_or_create(every=1, period="minutes")
    daily, _ = CrontabSchedule.objects.get_or_create(
        minute="0", hour="7", day_of_week="*", day_of_month="*", month_of_year="*", timezone="UTC"
    )
    PeriodicTask.objects.get_or_create(
        name=MAILS,
        defaults={
            "task": "notifications.tasks.send_notification_mails_task",
            "interval": every_minute,
            "expire_seconds": 60,
            "description": "Mails notifications wanted at once and keeps the others for the digest. Each "
            "notification starts this task itself; this run catches any whose start was lost. One cheap "
            "query when nothing waits.",
        },
    )
    PeriodicTask.objects.get_or_create(
        name=DIGESTS,
        defaults={
            "task": "notifications.tasks.send_digests_task",
            "crontab": daily,
            # A worker back within 12 hours still sends the day's digest; later, the next day's takes them.
            "expire_seconds": 12 * 3_600,
            "description": "Mails each player one digest of the notifications they chose to get daily.",
        },
    )
    # Tells a running beat to reload its schedule (django-celery-beat's change marker).
    PeriodicTasks.objects.update_or_create(ident=1, defaults={"last_update": timezone.now()})


def delete_tasks(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name__in=[MAILS, DIGESTS]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_tasks, delete_tasks)]
