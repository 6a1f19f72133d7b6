"""Rating settings changes are recorded moderator actions; replays keep each event's settings (issue 12 item 11).

The grant to the ``moderators`` group is done by ``accounts.sync`` after every ``migrate``.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ratings", "0009_replay_jobs"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [
        migrations.CreateModel(
            name="RatingSettingsChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "mode",
                    models.CharField(
                        choices=[
                            ("from_now_on", "From now on (history unchanged)"),
                            ("rerate", "Re-rate the whole history under the new settings"),
                        ],
                        max_length=12,
                    ),
                ),
                ("old_values", models.JSONField(help_text="Every rating setting before the change.")),
                ("new_values", models.JSONField(help_text="Every rating setting after the change.")),
                ("reason", models.TextField()),
                (
                    "created_at",
                    models.DateTimeField(
                        default=django.utils.timezone.now,
                        help_text="When the change took effect; for a change from now on, RDs were written back at "
                        "this instant.",
                    ),
                ),
                (
                    "after_event_id",
                    models.BigIntegerField(
                        blank=True,
                        help_text="The ladder's last rating event before the change (empty: none yet).",
                        null=True,
                    ),
                ),
                (
                    "materialised",
                    models.PositiveIntegerField(default=0, help_text="Ratings whose RD was written back."),
                ),
                (
                    "replayed_events",
                    models.PositiveIntegerField(default=0, help_text="Events re-rated (re-rate only)."),
                ),
                (
                    "changed_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "ladder",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="rating_settings_changes",
                        to="ladder.ladder",
                    ),
                ),
            ],
            options={
                "verbose_name": "rating settings change",
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["ladder", "id"], name="settings_change_ladder")],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("reason", ""), _negated=True), name="settings_change_has_reason"
                    )
                ],
            },
        ),
    ]
