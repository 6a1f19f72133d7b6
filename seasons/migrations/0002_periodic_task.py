"""Creates the hourly task that closes due seasons, and lets moderators manage seasons.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("seasons", "0001_initial"),
        ("ladder", "0006_periodic_tasks"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = []
