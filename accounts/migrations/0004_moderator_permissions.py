"""Moderators ban and unban players; only superusers change staff accounts (placeholder, filled by issue 12 item 1)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("accounts", "0003_moderators_match_permissions"), ("ratings", "0008_moderators_view_superseded_history")]

    operations = []
