"""Creates the periodic tasks in django-celery-beat's tables and lets moderators edit them.

Its work is done by ``accounts.sync`` (the moderators' permissions, the periodic tasks),
after every ``migrate``; the migration stays, empty, for the databases that recorded it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0005_ratings_fillfactor"),
        ("accounts", "0003_moderators_match_permissions"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = []
