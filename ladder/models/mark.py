"""Marks: a moderator's silent, site-wide mark on an account (docs/rules.md §15, "Marks")."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q


class MarkKind(models.TextChoices):
    BOOSTER = "booster", "Booster"
    SANDBAGGER = "sandbagger", "Sandbagger"
    OTHER_ACCOUNT = "other_account", "Another account of a player"


class PlayerMarkQuerySet(models.QuerySet["PlayerMark"]):
    def in_force(self) -> PlayerMarkQuerySet:
        """Marks not lifted: at most one per player (``mark_one_in_force``)."""
        return self.filter(lifted_at__isnull=True)

    def in_force_at(self, at: datetime) -> PlayerMarkQuerySet:
        """Marks that were in force at ``at``: made by then and not lifted by then."""
        return self.filter(Q(lifted_at__isnull=True) | Q(lifted_at__gt=at), created_at__lte=at)


class PlayerMark(models.Model):
    """While in force the account is left out of every leaderboard, its results against unmarked
    players are held for a moderator, the queue pairs it only with other marked accounts, and it
    enters no tournament.

    The player is not told: a mark is the moderators' own record.
    """

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="marks")
    kind = models.CharField(max_length=16, choices=MarkKind.choices)
    other_account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="For another account of a player: the account it belongs with, if known.",
    )
    note = models.TextField(help_text="Why, for the moderators. The player never reads it.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    lifted_at = models.DateTimeField(null=True, blank=True)
    lift_note = models.TextField(blank=True, help_text="Why the mark was lifted.")

    objects = PlayerMarkQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["player"], condition=Q(lifted_at__isnull=True), name="mark_one_in_force"),
            models.CheckConstraint(
                condition=Q(other_account__isnull=True) | Q(kind="other_account"),
                name="mark_other_account_kind",
            ),
            models.CheckConstraint(
                condition=~Q(other_account=models.F("player")),
                name="mark_other_account_not_self",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player} marked {self.get_kind_display().lower()}"
