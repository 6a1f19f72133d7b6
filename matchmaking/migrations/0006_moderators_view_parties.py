"""Moderators see the queue's searches and parties in the admin (read-only: they are players' own).

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("matchmaking", "0005_formats_and_parties"),
        ("accounts", "0005_user_email_verified"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = []
