"""Moderators, who read the rating history in the admin, also read the superseded history.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("ratings", "0007_superseded_history"),
        ("accounts", "0003_moderators_match_permissions"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = []
