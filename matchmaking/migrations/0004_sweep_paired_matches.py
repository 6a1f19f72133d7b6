"""The queue's sweep also ends paired matches whose ready check, play window or no-show claim ran out.

The sweep task ran every 15 seconds already; a ready check lasts a minute by default, so a
missed one is settled within 15 seconds of its deadline (a poll by either player settles
it at once). Nothing to migrate: the note says what the periodic task now does.
"""

from django.db import migrations

SWEEP = "Matchmaking queue sweep"


def describe(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=SWEEP).update(
        description="Ends searches past the ladder's queue timeout, drops players whose page stopped polling, "
        "and settles paired matches whose ready check, play window or no-show claim ran out."
    )


class Migration(migrations.Migration):
    dependencies = [
        ("matchmaking", "0003_queue_penalty"),
        ("ladder", "0006_periodic_tasks"),
        ("django_celery_beat", "__latest__"),
    ]

    operations = [migrations.RunPython(describe, migrations.RunPython.noop)]
