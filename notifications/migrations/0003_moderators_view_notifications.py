"""Moderators see who was told what (the notifications admin is read-only).

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0002_mail_periodic_tasks"),
        ("accounts", "0004_moderator_permissions"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = []
