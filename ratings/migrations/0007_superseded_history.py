"""History rows a replay replaces move to their own table instead of being marked in place.

Marking 2M rows ``is_current = false`` rewrote each row and its index entries (26 s of a
71 s replay of 1M matches); moving them is a third of that. The rows already marked move
over unchanged, with no ``superseded_at``.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0006_periodic_tasks"),
        ("ratings", "0006_history_event_without_constraint"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SupersededChange",
            fields=[
                (
                    "kind",
                    models.CharField(
                        choices=[("match", "Match"), ("adjustment", "Adjustment"), ("replay", "Replay")], max_length=10
                    ),
                ),
                ("rating_before", models.FloatField()),
                ("rd_before", models.FloatField(verbose_name="RD before")),
                ("volatility_before", models.FloatField()),
                ("rd_as_of_before", models.DateTimeField()),
                (
                    "rd_at_event",
                    models.FloatField(help_text="The RD the update started from.", verbose_name="RD at the event"),
                ),
                ("rating_after", models.FloatField()),
                ("rd_after", models.FloatField(verbose_name="RD after")),
                ("volatility_after", models.FloatField()),
                ("rd_as_of_after", models.DateTimeField()),
                ("expected", models.FloatField(blank=True, null=True)),
                ("score", models.FloatField(blank=True, null=True)),
                ("delta", models.FloatField()),
                ("engine", models.CharField(max_length=10)),
                ("engine_params", models.JSONField(default=dict)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "id",
                    models.BigIntegerField(
                        help_text="The row's id when it was current.", primary_key=True, serialize=False
                    ),
                ),
                (
                    "superseded_at",
                    models.DateTimeField(
                        blank=True,
                        help_text="When a replay replaced it (empty for rows replaced before this was kept).",
                        null=True,
                    ),
                ),
            ],
            options={
                "ordering": ["event_id", "id"],
            },
        ),
        migrations.AddField(
            model_name="supersededchange",
            name="event",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="ratings.ratingevent",
            ),
        ),
        migrations.AddField(
            model_name="supersededchange",
            name="ladder",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="ladder.ladder",
            ),
        ),
        migrations.AddField(
            model_name="supersededchange",
            name="match",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="ladder.match",
            ),
        ),
        migrations.AddField(
            model_name="supersededchange",
            name="player",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        # Rows earlier replays marked not current move to the new table, as they were.
        migrations.RunSQL(
            sql=[
                "INSERT INTO ratings_supersededchange (id, event_id, ladder_id, player_id, match_id, kind, rating_before, rd_before, volatility_before, rd_as_of_before, rd_at_event, rating_after, rd_after, volatility_after, rd_as_of_after, expected, score, delta, engine, engine_params, created_at, superseded_at) "
                "SELECT id, event_id, ladder_id, player_id, match_id, kind, rating_before, rd_before, volatility_before, rd_as_of_before, rd_at_event, rating_after, rd_after, volatility_after, rd_as_of_after, expected, score, delta, engine, engine_params, created_at, NULL FROM ratings_ratingchange WHERE NOT is_current",
                "DELETE FROM ratings_ratingchange WHERE NOT is_current",
            ],
            reverse_sql=[
                "INSERT INTO ratings_ratingchange (id, event_id, ladder_id, player_id, match_id, kind, rating_before, rd_before, volatility_before, rd_as_of_before, rd_at_event, rating_after, rd_after, volatility_after, rd_as_of_after, expected, score, delta, engine, engine_params, created_at, is_current) "
                "SELECT id, event_id, ladder_id, player_id, match_id, kind, rating_before, rd_before, volatility_before, rd_as_of_before, rd_at_event, rating_after, rd_after, volatility_after, rd_as_of_after, expected, score, delta, engine, engine_params, created_at, FALSE FROM ratings_supersededchange",
                "DELETE FROM ratings_supersededchange",
            ],
        ),
        migrations.RemoveConstraint(
            model_name="ratingchange",
            name="change_one_current_per_event_player",
        ),
        migrations.RemoveField(
            model_name="ratingchange",
            name="is_current",
        ),
        migrations.AddConstraint(
            model_name="ratingchange",
            constraint=models.UniqueConstraint(fields=("event", "player"), name="change_one_per_event_player"),
        ),
    ]
