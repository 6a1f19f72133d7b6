"""Fair-play limits on reports and flags on suspicious results (issue 12 item 2)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("ladder", "0006_periodic_tasks")]

    operations = []
