"""Replays, voids and corrections run as background jobs with progress (issue 12 item 7)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("ratings", "0008_moderators_view_superseded_history"), ("ladder", "0007_fair_play")]

    operations = []
