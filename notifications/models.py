"""What the site tells a player or moderator: one row per recipient per event.

The service that makes the event writes the rows in its own transaction, so a
notification exists exactly when its event does: a rolled-back report leaves none, and
``(recipient, kind, key)`` is unique, so a retried or racing event cannot tell anyone
twice. Replays recompute ratings without calling those services, so they notify nobody.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Kind(models.TextChoices):
    """What happened. The set stays open: a later feature adds its kinds here."""

    PAIRED = "paired", "Paired by the queue"
    RESULT_AWAITING = "result_awaiting", "A result awaits your answer"
    CONFIRM_REMINDER = "confirm_reminder", "A result confirms itself soon"
    RATED = "rated", "Match confirmed and rated"
    DISPUTED = "disputed", "A result was disputed"
    DECISION = "decision", "A moderator's decision"
    SEARCH_EXPIRED = "search_expired", "Your search expired"
    WEBHOOK_PAUSED = "webhook_paused", "A webhook was paused"
    MATCH_CANCELLED = "match_cancelled", "A paired match was cancelled"
    CANCEL_REQUESTED = "cancel_requested", "Your opponent asks to cancel"
    NO_SHOW_CLAIMED = "no_show_claimed", "Your opponent says you did not play"
    FORFEIT = "forfeit", "A match ended by forfeit"
    COMMENTED = "commented", "A new comment on your match"
    SUSPENDED = "suspended", "Suspended from a ladder"
    PARTY_INVITED = "party_invited", "Invited to a party"
    SEASON_ENDED = "season_ended", "A season ended"
    TOURNAMENT = "tournament", "News of a tournament you entered"
    FAIR_PLAY = "fair_play", "A fair-play warning"
    REPORT_OUTCOME = "report_outcome", "The outcome of a report you made"


class EmailStatus(models.TextChoices):
    """Where the notification's mail is. Only a recipient with a verified address gets
    ``pending``; the mail task then queues it for a mail, keeps it for the digest, or skips
    it. ``sent`` means the SMTP server accepted the mail; a mail it refused for good, or
    that could not be sent through all the retries, is ``failed``."""

    NONE = "none", "no mail (no verified address)"
    PENDING = "pending", "to decide"
    QUEUED = "queued", "to send"
    DIGEST = "digest", "in the next daily digest"
    SENT = "sent", "sent"
    FAILED = "failed", "failed"
    SKIPPED = "skipped", "not wanted"


class Notification(models.Model):
    # Indexed by the unique constraint and the indexes below, which all start with it. No
    # foreign-key trigger: a report inserts these rows in its own statement, which has just
    # read the recipients' accounts (accounts are deactivated, never deleted; Django still
    # deletes a deleted account's notifications with it).
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="notifications",
        db_index=False,
        db_constraint=False,
    )
    kind = models.CharField(max_length=32, choices=Kind)
    # What the event is about, unique per recipient and kind: "match:12", "search:7", "adjustment:3".
    key = models.CharField(max_length=64)
    # Likewise no trigger on the ladder and the match, which that statement has just
    # written or read (Django still deletes a ladder's or match's notifications with it).
    ladder = models.ForeignKey(
        "ladder.Ladder",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    match = models.ForeignKey(
        "ladder.Match", null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    # What the text needs, as it was when the event happened (names, deadline, rating change).
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    read_at = models.DateTimeField(null=True, blank=True)
    email_status = models.CharField(max_length=8, choices=EmailStatus, default=EmailStatus.NONE)
    emailed_at = models.DateTimeField(null=True, blank=True)
    # Tries of the mail that failed, when the mail sweep tries it next (while queued, also
    # how long a sweep holds the mails it took), and what the SMTP server said last. Defaults
    # in the database too: the ladder's own statements insert rows without naming these.
    email_attempts = models.PositiveSmallIntegerField(default=0, db_default=0)
    email_retry_at = models.DateTimeField(null=True, blank=True)
    email_error = models.CharField(max_length=200, blank=True, default="", db_default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["recipient", "kind", "key"], name="notification_once_per_event"),
        ]
        indexes = [
            # The page and the API: a recipient's newest first; the bell: their unread ones.
            models.Index(fields=["recipient", "-created_at", "-id"], name="notification_recipient_new"),
            models.Index(fields=["recipient"], condition=Q(read_at__isnull=True), name="notification_unread"),
            # The mail task's queue: only rows that still need a mail, and the failed ones
            # moderators count.
            models.Index(
                fields=["email_status", "id"],
                condition=Q(email_status__in=["pending", "queued", "digest", "failed"]),
                name="notification_mail_queue",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} for {self.recipient_id} ({self.key})"


class EmailMode(models.TextChoices):
    OFF = "off", "Off"
    INSTANT = "instant", "At once"
    DIGEST = "digest", "Daily digest"


# What a player gets by mail until they choose: what needs them at once, the rest daily.
DEFAULT_EMAIL_MODES: dict[str, str] = {
    Kind.PAIRED: EmailMode.OFF,  # they are on the site, searching
    Kind.RESULT_AWAITING: EmailMode.INSTANT,
    Kind.CONFIRM_REMINDER: EmailMode.INSTANT,
    Kind.RATED: EmailMode.DIGEST,
    Kind.DISPUTED: EmailMode.INSTANT,
    Kind.DECISION: EmailMode.INSTANT,
    Kind.SEARCH_EXPIRED: EmailMode.OFF,
    Kind.WEBHOOK_PAUSED: EmailMode.INSTANT,
    Kind.MATCH_CANCELLED: EmailMode.OFF,  # they were on the site a minute ago
    Kind.CANCEL_REQUESTED: EmailMode.INSTANT,
    Kind.NO_SHOW_CLAIMED: EmailMode.INSTANT,  # it has a deadline
    Kind.FORFEIT: EmailMode.INSTANT,
    Kind.COMMENTED: EmailMode.DIGEST,
    Kind.SUSPENDED: EmailMode.INSTANT,
    Kind.PARTY_INVITED: EmailMode.OFF,  # the invitation lasts minutes: they are on the site together
    Kind.SEASON_ENDED: EmailMode.DIGEST,  # nothing to answer; a whole ladder is told at once
    Kind.TOURNAMENT: EmailMode.INSTANT,  # a pairing has a deadline
    Kind.FAIR_PLAY: EmailMode.INSTANT,  # a warning is read before the next game
    Kind.REPORT_OUTCOME: EmailMode.DIGEST,  # nothing to answer
}


class EmailPreference(models.Model):
    """A player's choice of mail for one kind; without a row, ``DEFAULT_EMAIL_MODES`` holds."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="email_preferences")
    kind = models.CharField(max_length=32, choices=Kind)
    mode = models.CharField(max_length=8, choices=EmailMode)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "kind"], name="email_preference_once_per_kind")]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.kind} {self.mode}"
