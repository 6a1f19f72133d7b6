"""Gives the ``moderators`` group the match and rating-history permissions.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_moderators_group"),
        ("ladder", "0002_matches"),
        ("ratings", "0002_rating_history"),
    ]

    operations = []
