"""Stop checking the foreign keys every report makes to the same row (the ladder, the reporter).

The model says why (``ladder.Match.ladder``); Django still enforces their ``on_delete``.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0030_lighter_report_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="match",
            name="ladder",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="matches",
                to="ladder.ladder",
            ),
        ),
        migrations.AlterField(
            model_name="match",
            name="reported_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="reported_matches",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
