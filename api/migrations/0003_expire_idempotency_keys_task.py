"""Creates the hourly periodic task that forgets old Idempotency-Keys.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_idempotency_key_created"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = []
