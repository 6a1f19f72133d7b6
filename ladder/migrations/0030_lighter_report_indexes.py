"""Drop the single-column indexes of foreign keys that lead a composite or unique index.

Only the indexes go: the foreign-key constraints stay as they are (Django's own AlterField
would drop and add each constraint again, checking every row of the table).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


# (index, table, column): Django's names for the indexes it made for these foreign keys.
DROPPED = [
    ("ladder_match_ladder_id_9b00ad9b", "ladder_match", "ladder_id"),
    ("ladder_match_reported_by_id_36c33e68", "ladder_match", "reported_by_id"),
    ("ladder_matchside_match_id_365c1d8f", "ladder_matchside", "match_id"),
    ("ladder_participant_match_id_d0ef9ed3", "ladder_participant", "match_id"),
    ("ladder_participant_player_id_19b9993d", "ladder_participant", "player_id"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0029_newcomer_weight"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="match",
                    name="ladder",
                    field=models.ForeignKey(
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
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="reported_matches",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="matchside",
                    name="match",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="sides",
                        to="ladder.match",
                    ),
                ),
                migrations.AlterField(
                    model_name="participant",
                    name="match",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="participants",
                        to="ladder.match",
                    ),
                ),
                migrations.AlterField(
                    model_name="participant",
                    name="player",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="participations",
                        to=settings.AUTH_USER_MODEL,
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
