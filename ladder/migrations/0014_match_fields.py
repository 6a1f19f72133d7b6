"""Match fields (docs/match-fields.md): a ladder's game details and a report's values; moderators edit the fields.

The grant to the ``moderators`` group is done by ``accounts.sync`` after every ``migrate``.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0013_rd_floor"),
        ("accounts", "0005_user_email_verified"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="MatchField",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "name",
                    models.SlugField(
                        help_text='The key in the API and in list filters, e.g. "map", "tribe", "win_condition".',
                        max_length=30,
                    ),
                ),
                ("label", models.CharField(help_text='What the report form shows, e.g. "Map".', max_length=60)),
                ("help_text", models.CharField(blank=True, help_text="A hint shown under the field.", max_length=200)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("choice", "Choice"),
                            ("text", "Free text"),
                            ("duration", "Duration"),
                            ("yes_no", "Yes/no"),
                            ("url", "Link"),
                        ],
                        max_length=10,
                    ),
                ),
                (
                    "scope",
                    models.CharField(
                        choices=[("match", "Once per match"), ("player", "Once per player")],
                        default="match",
                        max_length=10,
                    ),
                ),
                ("required", models.BooleanField(default=False, help_text="A report without this field is refused.")),
                (
                    "choices",
                    models.JSONField(
                        blank=True, default=list, help_text="The allowed values of a choice field, in order."
                    ),
                ),
                (
                    "unrated_when_yes",
                    models.BooleanField(
                        default=False,
                        help_text='Yes/no fields only: a report answering "yes" is refused, so the game is not rated.',
                    ),
                ),
                ("position", models.PositiveSmallIntegerField(default=0, help_text="Fields are shown in this order.")),
                (
                    "ladder",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="match_fields", to="ladder.ladder"
                    ),
                ),
            ],
            options={
                "ordering": ["position", "id"],
            },
        ),
        migrations.CreateModel(
            name="MatchFieldValue",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "value",
                    models.CharField(
                        help_text="Canonical text: seconds for a duration, yes/no, a choice.", max_length=500
                    ),
                ),
                (
                    "field",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="values", to="ladder.matchfield"
                    ),
                ),
                (
                    "match",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="field_values", to="ladder.match"
                    ),
                ),
                (
                    "player",
                    models.ForeignKey(
                        blank=True,
                        help_text="The player this value is about; per-player fields only.",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["field__position", "field_id", "player_id"],
            },
        ),
        migrations.AddConstraint(
            model_name="matchfield",
            constraint=models.UniqueConstraint(fields=("ladder", "name"), name="match_field_unique_name"),
        ),
        migrations.AddIndex(
            model_name="matchfieldvalue",
            index=models.Index(fields=["field", "value"], name="match_field_value_lookup"),
        ),
        migrations.AddConstraint(
            model_name="matchfieldvalue",
            constraint=models.UniqueConstraint(
                condition=models.Q(("player__isnull", True)),
                fields=("match", "field"),
                name="match_field_value_unique_match",
            ),
        ),
        migrations.AddConstraint(
            model_name="matchfieldvalue",
            constraint=models.UniqueConstraint(
                condition=models.Q(("player__isnull", False)),
                fields=("match", "field", "player"),
                name="match_field_value_unique_player",
            ),
        ),
    ]
