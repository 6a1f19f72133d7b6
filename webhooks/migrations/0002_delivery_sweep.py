"""Creates the periodic task that sends webhook deliveries whose own task went missing.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = []
