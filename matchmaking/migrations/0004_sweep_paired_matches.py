"""The queue's sweep also ends paired matches whose ready check, play window or no-show claim ran out.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("matchmaking", "0003_queue_penalty"),
        ("ladder", "0006_periodic_tasks"),
        ("django_celery_beat", "__latest__"),
    ]

    operations = []
