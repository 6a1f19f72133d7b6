"""Replays, voids and corrections run as background jobs with progress (issue 12 item 7),
and rating adjustments are bounded (item 12).

Moderators, who void and correct matches, see the jobs (read-only) in the admin. A periodic
task sends again jobs whose message never reached a worker (the broker was down).

The bound on ``rating_delta`` is checked for every new row. An adjustment stored before it
(a probe stored 1e308) stays in the history as it was: on PostgreSQL the constraint is
added ``NOT VALID``, so existing rows are not checked; elsewhere it is added only when no
stored row breaks it.

The grant to the ``moderators`` group and the periodic task are made by ``accounts.sync``
after every ``migrate``.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


DELTA_BOUND = models.CheckConstraint(
    condition=models.Q(("rating_delta__gte", -1000.0), ("rating_delta__lte", 1000.0)),
    name="adjustment_delta_bounded",
    violation_error_message="The rating change must be a number from -1,000 to +1,000.",
)


def add_delta_bound(apps, schema_editor):
    Adjustment = apps.get_model("ratings", "RatingAdjustment")
    if schema_editor.connection.vendor == "postgresql":
        table = schema_editor.quote_name(Adjustment._meta.db_table)
        schema_editor.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {schema_editor.quote_name(DELTA_BOUND.name)} "
            "CHECK (rating_delta >= -1000.0 AND rating_delta <= 1000.0) NOT VALID"
        )
    elif not Adjustment.objects.exclude(rating_delta__gte=-1000.0, rating_delta__lte=1000.0).exists():
        schema_editor.add_constraint(Adjustment, DELTA_BOUND)


def remove_delta_bound(apps, schema_editor):
    Adjustment = apps.get_model("ratings", "RatingAdjustment")
    if schema_editor.connection.vendor == "postgresql":
        table = schema_editor.quote_name(Adjustment._meta.db_table)
        schema_editor.execute(
            f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {schema_editor.quote_name(DELTA_BOUND.name)}"
        )
    else:
        schema_editor.remove_constraint(Adjustment, DELTA_BOUND)


class Migration(migrations.Migration):
    dependencies = [
        ("ratings", "0008_moderators_view_superseded_history"),
        ("ladder", "0007_fair_play"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReplayJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("void", "Void"),
                            ("correct", "Correction"),
                            ("replay", "Replay"),
                            ("withdraw", "Withdrawn adjustment"),
                        ],
                        max_length=10,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                (
                    "status",
                    models.CharField(
                        choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed")],
                        default="queued",
                        max_length=10,
                    ),
                ),
                ("events_done", models.PositiveBigIntegerField(default=0)),
                (
                    "events_total",
                    models.PositiveBigIntegerField(blank=True, help_text="Known once the replay starts.", null=True),
                ),
                ("error", models.TextField(blank=True, help_text="Why the last run failed.")),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "from_event",
                    models.ForeignKey(
                        blank=True,
                        help_text="The replay starts at this event; empty replays the whole history.",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="ratings.ratingevent",
                    ),
                ),
                (
                    "ladder",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="replay_jobs", to="ladder.ladder"
                    ),
                ),
                (
                    "match",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="replay_jobs",
                        to="ladder.match",
                    ),
                ),
                (
                    "requested_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "replay job",
                "indexes": [models.Index(fields=["ladder", "status"], name="replay_job_ladder_status")],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            ("events_total__isnull", True),
                            ("events_done__lte", models.F("events_total")),
                            _connector="OR",
                        ),
                        name="replay_job_done_within_total",
                    )
                ],
            },
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddConstraint(model_name="ratingadjustment", constraint=DELTA_BOUND)],
            database_operations=[migrations.RunPython(add_delta_bound, remove_delta_bound)],
        ),
    ]
