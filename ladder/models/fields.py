"""Match fields: the game details a ladder asks for with each report (docs/match-fields.md).

A ladder's moderators define its fields (a map, a tribe per player, a win condition, the
game's length, a replay link); each report answers them, and the answers are kept as
canonical text on ``MatchFieldValue`` so that lists can filter by them and statistics can
count them.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

TEXT_MAX_LENGTH = 200
URL_MAX_LENGTH = 500
CHOICE_MAX_LENGTH = 60


class FieldKind(models.TextChoices):
    CHOICE = "choice", "Choice"  # one of MatchField.choices
    TEXT = "text", "Free text"  # up to 200 characters, e.g. a map name
    DURATION = "duration", "Duration"  # stored as whole seconds, as text: "1830"
    YES_NO = "yes_no", "Yes/no"  # stored as "yes" / "no"
    URL = "url", "Link"  # http(s) only


class FieldScope(models.TextChoices):
    MATCH = "match", "Once per match"  # e.g. map, win condition, game length, replay
    PLAYER = "player", "Once per player"  # e.g. tribe


class MatchField(models.Model):
    """One detail a ladder asks for with each report: its key, label, kind and scope."""

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="match_fields")
    name = models.SlugField(
        max_length=30, help_text='The key in the API and in list filters, e.g. "map", "tribe", "win_condition".'
    )
    label = models.CharField(max_length=60, help_text='What the report form shows, e.g. "Map".')
    help_text = models.CharField(max_length=200, blank=True, help_text="A hint shown under the field.")
    kind = models.CharField(max_length=10, choices=FieldKind)
    scope = models.CharField(max_length=10, choices=FieldScope, default=FieldScope.MATCH)
    required = models.BooleanField(default=False, help_text="A report without this field is refused.")
    choices = models.JSONField(default=list, blank=True, help_text="The allowed values of a choice field, in order.")
    unrated_when_yes = models.BooleanField(
        default=False, help_text='Yes/no fields only: a report answering "yes" is refused, so the game is not rated.'
    )
    position = models.PositiveSmallIntegerField(default=0, help_text="Fields are shown in this order.")

    class Meta:
        ordering = ["position", "id"]
        constraints = [models.UniqueConstraint(fields=["ladder", "name"], name="match_field_unique_name")]

    def __str__(self) -> str:
        return f"{self.label} ({self.name})"

    @property
    def per_player(self) -> bool:
        return self.scope == FieldScope.PLAYER

    def clean(self) -> None:
        """A choice field needs its choices; only a yes/no field can refuse a report."""
        errors: dict[str, str] = {}
        if self.kind == FieldKind.CHOICE:
            if not isinstance(self.choices, list) or not self.choices:
                errors["choices"] = "A choice field needs at least one choice."
            elif any(not isinstance(c, str) or not c.strip() or len(c) > CHOICE_MAX_LENGTH for c in self.choices):
                errors["choices"] = f"Each choice is text of 1 to {CHOICE_MAX_LENGTH} characters."
            elif len({c.casefold() for c in self.choices}) != len(self.choices):
                errors["choices"] = "The choices must differ from one another."
        elif self.choices:
            errors["choices"] = "Only a choice field has choices."
        if self.unrated_when_yes and self.kind != FieldKind.YES_NO:
            errors["unrated_when_yes"] = "Only a yes/no field can refuse a report."
        if errors:
            raise ValidationError(errors)


class MatchFieldValue(models.Model):
    """One answer of a report: a field's canonical value for a match (or for one of its players)."""

    match = models.ForeignKey("ladder.Match", on_delete=models.CASCADE, related_name="field_values")
    field = models.ForeignKey(MatchField, on_delete=models.PROTECT, related_name="values")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The player this value is about; per-player fields only.",
    )
    value = models.CharField(max_length=500, help_text="Canonical text: seconds for a duration, yes/no, a choice.")

    class Meta:
        ordering = ["field__position", "field_id", "player_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["match", "field"],
                condition=models.Q(player__isnull=True),
                name="match_field_value_unique_match",
            ),
            models.UniqueConstraint(
                fields=["match", "field", "player"],
                condition=models.Q(player__isnull=False),
                name="match_field_value_unique_player",
            ),
        ]
        indexes = [models.Index(fields=["field", "value"], name="match_field_value_lookup")]

    def __str__(self) -> str:
        return f"{self.field.name}={self.value} on match {self.match_id}"
