"""Creates the periodic task that sends webhook deliveries whose own task went missing.

A delivery's task is queued when its event commits, and again after a short backoff; a
longer backoff, or a task lost with the broker, is left to this sweep. Running the
migration again changes nothing: the task is looked up by name and left as moderators set it.
"""

from django.db import migrations
from django.utils import timezone

SWEEP = "Webhook deliveries: send the overdue ones"


def create_task(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTasks = apps.get_model("django_celery_beat", "PeriodicTasks")

    every_minute, _ = IntervalSchedule.objects.get_or_create(every=1, period="minutes")
    PeriodicTask.objects.get_or_create(
        name=SWEEP,
        defaults={
            "task": "webhooks.tasks.deliver_due_webhooks_task",
            "interval": every_minute,
            "expire_seconds": 60,
            "description": "Queues pending webhook deliveries that are overdue: retries after a long backoff, "
            "and deliveries whose task was lost.",
        },
    )
    PeriodicTasks.objects.update_or_create(ident=1, defaults={"last_update": timezone.now()})


def delete_task(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=SWEEP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_task, delete_task)]
