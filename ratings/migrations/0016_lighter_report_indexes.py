"""Drop the single-column indexes of foreign keys that lead a composite or unique index.

Only the indexes go: the foreign-key constraints stay as they are (Django's own AlterField
would drop and add each constraint again, checking every row of the table).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


# (index, table, column): Django's names for the indexes it made for these foreign keys.
DROPPED = [
    ("ratings_playerrating_ladder_id_228946d7", "ratings_playerrating", "ladder_id"),
    ("ratings_playerrating_player_id_6e2735ff", "ratings_playerrating", "player_id"),
    ("ratings_ratingevent_ladder_id_78ca48f6", "ratings_ratingevent", "ladder_id"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0030_lighter_report_indexes"),
        ("ratings", "0015_refund_adjustments"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="playerrating",
                    name="ladder",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="ratings",
                        to="ladder.ladder",
                    ),
                ),
                migrations.AlterField(
                    model_name="playerrating",
                    name="player",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="ratings",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="ratingevent",
                    name="ladder",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="rating_events",
                        to="ladder.ladder",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{name}"', reverse_sql=f'CREATE INDEX "{name}" ON "{table}" ("{column}")'
                )
                for name, table, column in DROPPED
            ],
        ),
    ]
