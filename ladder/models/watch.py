"""The fair-play watch's record of each player's results, and reports about players (docs/rules.md §15)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Outcome(models.TextChoices):
    PLAYED = "played", "Played"
    QUICK_WIN = "quick_win", "Quick win"
    QUICK_LOSS = "quick_loss", "Quick loss"


class WatchRecord(models.Model):
    """One player's side of one quick result: a quick win or loss (``played``: a quick draw), and against whom.

    Results that are not quick are not recorded; a player's last results are read from the matches."""

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="+")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    match = models.ForeignKey("ladder.Match", on_delete=models.CASCADE, related_name="watch_records")
    outcome = models.CharField(max_length=10, choices=Outcome)
    opponent = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The one opponent of a game of two players; empty for larger games.",
    )
    against_new = models.BooleanField(
        default=False, help_text="A win over a new account, or over one that met nobody else in this ladder."
    )
    seconds = models.PositiveIntegerField(null=True, blank=True, help_text="How long the game took, when known.")
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [models.UniqueConstraint(fields=["match", "player"], name="watch_record_once")]
        indexes = [models.Index(fields=["ladder", "player", "-at"], name="watch_record_recent")]

    def __str__(self) -> str:
        return f"{self.player_id}: {self.outcome} in {self.match_id}"


class ReportReason(models.TextChoices):
    BOOSTING = "boosting", "Boosting (losing on purpose to raise someone)"
    SANDBAGGING = "sandbagging", "Sandbagging (losing on purpose to sink one's rating)"
    OTHER_ACCOUNT = "other_account", "Another account of the same person"
    ABUSE = "abuse", "Abuse"
    OTHER = "other", "Other"


class ReportStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACTED = "acted", "Acted on"
    DISMISSED = "dismissed", "Dismissed"


class PlayerReport(models.Model):
    """A report about a player, for the moderators: by a player, or filed by the fair-play watch (no reporter)."""

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="player_reports")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reports_about")
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reports_made",
        help_text="Empty: filed by the fair-play watch.",
    )
    reason = models.CharField(max_length=14, choices=ReportReason)
    text = models.TextField(blank=True, max_length=2000)
    evidence = models.JSONField(default=dict, blank=True, help_text="What the watch saw: the games and opponents.")
    matches = models.ManyToManyField("ladder.Match", blank=True, related_name="player_reports")
    status = models.CharField(max_length=10, choices=ReportStatus, default=ReportStatus.OPEN)
    created_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "-created_at"], name="player_report_open")]
        constraints = [
            # One open report by a player about another; the watch keeps one per reason itself.
            models.UniqueConstraint(
                fields=["reporter", "player"],
                condition=models.Q(status="open", reporter__isnull=False),
                name="player_report_one_open",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_reason_display()}: {self.player_id}"

    @property
    def automatic(self) -> bool:
        return self.reporter_id is None
