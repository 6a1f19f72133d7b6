"""Queue-timeout adjustments no longer cite a document outside the repository in their reason.

Before, their reason ended in a bracketed citation of a specification section that only the
project's first authors had, e.g. "… the RD clock restarts (XXXX §6)."; now it ends at
"restarts.". The rule it cited is docs/rules.md §13.
"""

from django.db import migrations

NEW = "Searched for a match until the queue timed out: the RD clock restarts."
OLD_PATTERN = r"^Searched for a match until the queue timed out: the RD clock restarts \([A-Z]+ §6\)\.$"


def forward(apps, schema_editor):
    apps.get_model("ratings", "RatingAdjustment").objects.filter(reason__regex=OLD_PATTERN).update(reason=NEW)


class Migration(migrations.Migration):
    dependencies = [("ratings", "0010_rating_settings")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
