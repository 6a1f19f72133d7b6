"""Creates the ``moderators`` group with what moderators need in the admin.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("ladder", "0001_initial"),
        ("ratings", "0001_initial"),
        ("axes", "__latest__"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = []
