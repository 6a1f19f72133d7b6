"""Moderators suspend players from a ladder and read a match's comments and evidence in the admin.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0009_match_lifecycle_comments_suspensions"),
        ("accounts", "0005_user_email_verified"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = []
