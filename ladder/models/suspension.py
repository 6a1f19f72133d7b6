"""Per-ladder suspensions: a player kept out of one ladder until a date (docs/rules.md §18)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q


class SuspensionQuerySet(models.QuerySet["Suspension"]):
    def in_force(self, now: datetime) -> SuspensionQuerySet:
        """Suspensions that have begun, have not ended and were not lifted."""
        return self.filter(Q(ends_at__isnull=True) | Q(ends_at__gt=now), starts_at__lte=now, lifted_at__isnull=True)


class Suspension(models.Model):
    """While in force the player cannot search or report in the ladder and is not listed in it."""

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="suspensions")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="suspensions")
    reason = models.TextField(help_text="Shown to the player on the ladder page and when they are refused.")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField(null=True, blank=True, help_text="Empty: until a moderator lifts it.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True, help_text="Set to end the suspension early.")
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The moderator who lifted it.",
    )

    objects = SuspensionQuerySet.as_manager()

    class Meta:
        ordering = ["-starts_at", "-id"]
        indexes = [models.Index(fields=["ladder", "player"], name="suspension_ladder_player")]
        constraints = [
            models.CheckConstraint(
                condition=Q(ends_at__isnull=True) | Q(ends_at__gt=models.F("starts_at")),
                name="suspension_ends_after_start",
            )
        ]

    def __str__(self) -> str:
        return f"{self.player} suspended from {self.ladder}"
