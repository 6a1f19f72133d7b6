"""Creates the hourly periodic task that forgets old Idempotency-Keys.

Like the other schedules (ladder 0006) it lives in django-celery-beat's tables, so
moderators can change or pause it in the admin; running the migration again changes
nothing.
"""

from django.db import migrations
from django.utils import timezone

EXPIRE = "Forget old Idempotency-Keys of API reports"


def create_task(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTasks = apps.get_model("django_celery_beat", "PeriodicTasks")
    half_past, _ = CrontabSchedule.objects.get_or_create(
        minute="30", hour="*", day_of_week="*", day_of_month="*", month_of_year="*", timezone="UTC"
    )
    PeriodicTask.objects.get_or_create(
        name=EXPIRE,
        defaults={
            "task": "api.tasks.expire_idempotency_keys_task",
            "crontab": half_past,
            "expire_seconds": 3_600,
            "description": "Every hour, deletes the Idempotency-Keys of API reports older than "
            "API_IDEMPOTENCY_KEY_HOURS (24 by default), with the responses kept for their retries.",
        },
    )
    PeriodicTasks.objects.update_or_create(ident=1, defaults={"last_update": timezone.now()})


def delete_task(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=EXPIRE).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_idempotency_key_created"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_task, delete_task)]
