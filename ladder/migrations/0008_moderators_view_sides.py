"""Moderators see each match's sides and players in the admin (the match page's inlines).

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0007_fair_play"),
        ("accounts", "0004_moderator_permissions"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = []
