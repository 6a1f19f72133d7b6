"""Stop checking the foreign keys every report makes to the same row (the ladder, the reporter).

The model says why (``ladder.Match.ladder``); Django still enforces their ``on_delete``.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0031_unchecked_hot_keys"),
        ("ratings", "0016_lighter_report_indexes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="ratingevent",
            name="ladder",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="rating_events",
                to="ladder.ladder",
            ),
        ),
    ]
