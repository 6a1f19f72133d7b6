"""An entry of the audit trail (see the package docstring)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Action(models.TextChoices):
    MATCH_CONFIRM = "match_confirm", "Confirmed a result"
    MATCH_VOID = "match_void", "Voided a match"
    MATCH_CORRECT = "match_correct", "Corrected a result"
    SUSPEND = "suspend", "Suspended a player"
    SUSPENSION_LIFT = "suspension_lift", "Lifted a suspension"
    RATING_ADJUST = "rating_adjust", "Adjusted a rating"
    ADJUSTMENT_WITHDRAW = "adjustment_withdraw", "Withdrew an adjustment"
    REFUND = "refund", "Refunded a player's victims"
    RATING_SETTINGS = "rating_settings", "Changed rating settings"
    MARK = "mark", "Marked an account"
    MARK_LIFT = "mark_lift", "Lifted a mark"
    REPORTS_DECIDE = "reports_decide", "Decided reports about a player"
    ADMIN_ADD = "admin_add", "Added in the admin"
    ADMIN_CHANGE = "admin_change", "Changed in the admin"
    ADMIN_DELETE = "admin_delete", "Deleted in the admin"
    STAFF_SIGN_IN = "staff_sign_in", "Signed in (staff)"
    ACCOUNT_DELETE = "account_delete", "Deleted an account"


class AuditEntry(models.Model):
    """One action: who (``actor``; the name stays if the account goes), what, about whom, where, why."""

    at = models.DateTimeField(db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_actions"
    )
    actor_name = models.CharField(max_length=150, help_text="The actor's username when they acted.")
    action = models.CharField(max_length=32, choices=Action, db_index=True)
    subject = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="audit_entries",
        help_text="The player the action was about, if one.",
    )
    subject_name = models.CharField(max_length=150, blank=True)
    ladder = models.ForeignKey("ladder.Ladder", null=True, blank=True, on_delete=models.SET_NULL)
    target = models.CharField(
        max_length=200, blank=True, help_text="What was acted on: “match 12”, “Webhook: results to Discord”…"
    )
    reason = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True, help_text="The action's details (points, old and new values…).")

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name = "audit entry"
        verbose_name_plural = "audit trail"
        indexes = [
            models.Index(fields=["subject", "-at"], name="audit_subject_at"),
            models.Index(fields=["actor", "-at"], name="audit_actor_at"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_name}: {self.get_action_display()} ({self.at:%Y-%m-%d %H:%M})"
