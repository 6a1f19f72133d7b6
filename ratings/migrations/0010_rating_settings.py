"""Rating settings changes are recorded moderator actions; replays keep each event's settings (issue 12 item 11)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("ratings", "0009_replay_jobs")]

    operations = []
