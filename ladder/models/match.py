"""Matches: who played on which side, where each side placed, and where the result stands."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from core.moments import moment_text


class MatchStatus(models.TextChoices):
    READY_CHECK = "ready_check", "Waiting for players to be ready"  # paired by the queue, docs/rules.md §13
    SCHEDULED = "scheduled", "To be played"  # paired by the queue (and ready), no result yet
    CLAIMED = "claimed", "No-show claimed"  # a side says the other did not play; awaiting their answer
    PENDING = "pending", "Awaiting confirmation"
    CONFIRMED = "confirmed", "Confirmed"
    DISPUTED = "disputed", "Disputed"
    VOID = "void", "Void"
    CANCELLED = "cancelled", "Cancelled"  # a paired match that was never played: never rated


# A paired match no one has played yet: the states the ready check, the play window and
# no-show claims act on.
OPEN_STATUSES = (MatchStatus.READY_CHECK, MatchStatus.SCHEDULED, MatchStatus.CLAIMED)


class CancelReason(models.TextChoices):
    READY_MISSED = "ready_missed", "a player was not ready in time"
    AGREED = "agreed", "both sides agreed to cancel"
    EXPIRED = "expired", "no result within the play window"
    FORFEIT = "forfeit", "a forfeit, not rated in this ladder"
    MODERATOR = "moderator", "cancelled by a moderator"
    SERIES = "series", "a series whose games were rated one by one"


class Confirmation(models.TextChoices):
    PARTICIPANT = "participant", "by the other side"
    AUTOMATIC = "automatic", "automatically, unanswered"
    TRUSTED = "trusted", "reported by a trusted reporter"
    MODERATOR = "moderator", "by a moderator"
    FORFEIT = "forfeit", "by forfeit: a no-show claim went unanswered"


class SideAnswer(models.TextChoices):
    REPORTED = "reported", "Reported"
    CONFIRMED = "confirmed", "Confirmed"
    DISPUTED = "disputed", "Disputed"


class MatchFormat(models.TextChoices):
    ONE_VS_ONE = "1v1", "1 v 1"
    TEAMS = "teams", "teams"
    UNEVEN_TEAMS = "uneven", "uneven teams"
    FREE_FOR_ALL = "ffa", "free-for-all"


class MatchQuerySet(models.QuerySet["Match"]):
    def awaiting_confirmation(self) -> MatchQuerySet:
        return self.filter(status=MatchStatus.PENDING)

    def rated(self) -> MatchQuerySet:
        return self.filter(status=MatchStatus.CONFIRMED, rated_at__isnull=False)

    def involving(self, player_id: int) -> MatchQuerySet:
        return self.filter(participants__player_id=player_id)


class Match(models.Model):
    """One game of a ladder, from report to confirmation (or dispute, or void).

    The result lives on the sides (``MatchSide.placement``); a confirmed match is rated
    exactly once, and ``rated_at`` records when. Ratings themselves are in the history
    (``ratings.RatingChange``), which is also what a correction or void replays.
    """

    # ``ladder`` and ``reported_by`` lead composite indexes (``Meta.indexes``), which serve
    # look-ups by either alone: no single-column index of their own for every report to keep up.
    # Neither is checked by PostgreSQL either: every report of a ladder names the same ladder
    # and, from a game server, the same reporter, and a checked key takes a share lock on that
    # one row at each commit, which concurrent reports turn into shared multi-transaction locks
    # (most of a report's cost to PostgreSQL beyond its own rows). Ladders are never deleted
    # while they have matches (PROTECT, enforced by Django) and accounts are pseudonymised, never
    # deleted (``accounts.deletion``), so no report can name a row that is not there.
    ladder = models.ForeignKey(
        "ladder.Ladder", on_delete=models.PROTECT, related_name="matches", db_index=False, db_constraint=False
    )
    status = models.CharField(max_length=12, choices=MatchStatus, default=MatchStatus.PENDING)
    played_at = models.DateTimeField(help_text="When the game was played; ratings use the RDs at this instant.")
    reported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="reported_matches",
        db_index=False,
        db_constraint=False,
    )
    reported_at = models.DateTimeField(null=True, blank=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    confirmation = models.CharField(max_length=12, choices=Confirmation, blank=True)
    rated_at = models.DateTimeField(null=True, blank=True, help_text="When the ratings were applied.")
    voided_at = models.DateTimeField(null=True, blank=True)
    voided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="voided_matches"
    )
    moderator_note = models.TextField(blank=True, help_text="Why a moderator voided or corrected this match.")
    paired_by_queue = models.BooleanField(
        default=False, db_default=False, help_text="The matchmaking queue paired these players for this game."
    )
    queue_format = models.CharField(
        max_length=8,
        blank=True,
        default="",
        db_default="",
        help_text="Formed by the queue: the format searched for (1v1, 2v2, ffa4, teams4…; ladder/formats.py).",
    )
    ready_deadline = models.DateTimeField(
        null=True, blank=True, help_text="Paired by the queue: every player must be ready by then."
    )
    play_deadline = models.DateTimeField(
        null=True, blank=True, help_text="Paired by the queue: a match with no result by then expires unrated."
    )
    claim_deadline = models.DateTimeField(
        null=True, blank=True, help_text="A no-show claim unanswered by then becomes a forfeit."
    )
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancel_reason = models.CharField(max_length=12, choices=CancelReason, blank=True, default="", db_default="")
    held_for_review = models.BooleanField(
        "flagged",
        default=False,
        db_default=False,
        help_text="The fair-play checks flagged this result when it was reported: it never confirms itself "
        "and waits for the opponent or a moderator.",
    )
    held_for_moderator = models.BooleanField(
        "held for a moderator",
        default=False,
        db_default=False,
        help_text="The fair-play watch held this result: its players' answers are recorded, but only a moderator "
        "confirms it (or corrects or voids it).",
    )
    review_evidence = models.JSONField(
        null=True, blank=True, help_text="What the fair-play checks saw when the result was reported."
    )
    rated = models.BooleanField(
        default=True,
        db_default=True,
        help_text="Off for a game that never changes ratings (an unrated tournament's): it is reported, "
        "confirmed and decided like any other, and counts in its tournament only.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MatchQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "matches"
        ordering = ["-played_at", "-id"]
        indexes = [
            models.Index(fields=["ladder", "status", "played_at"], name="match_ladder_status_played"),
            models.Index(fields=["status", "reported_at"], name="match_status_reported"),
            models.Index(fields=["reported_by", "reported_at"], name="match_reporter_reported"),
            models.Index(
                fields=["status"], condition=Q(status__in=["ready_check", "scheduled", "claimed"]), name="match_open"
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(rated_at__isnull=True) | Q(status__in=["confirmed", "void"]),
                name="match_rated_only_when_confirmed_or_void",
            ),
        ]

    def __str__(self) -> str:
        """ "ash vs misty · Pokémon Singles · 22 Nov": what the admin's titles, logs and links show."""
        if self.pk is None:
            return "New match"
        sides: dict[int, list[str]] = {}
        rows = Participant.objects.filter(match_id=self.pk).order_by("side__index", "pk")
        for index, name in rows.values_list("side__index", "player__username"):
            sides.setdefault(index, []).append(name)
        players = " vs ".join(" & ".join(names) for _, names in sorted(sides.items())) or f"Match {self.pk}"
        return f"{players} · {self.ladder.name} · {moment_text(self.played_at, 'day')}"

    def get_absolute_url(self) -> str:
        return reverse("ladder:match", kwargs={"pk": self.pk})


class MatchSide(models.Model):
    """One side of a match (a player or a team) with its placement: 1 is best, equal places draw."""

    # The unique (match, index) index serves look-ups by match: no index of its own to keep up.
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="sides", db_index=False)
    index = models.PositiveSmallIntegerField()
    placement = models.PositiveSmallIntegerField(null=True, blank=True)
    answer = models.CharField(max_length=10, choices=SideAnswer, blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    dispute_reason = models.TextField(blank=True)
    ready_at = models.DateTimeField(
        null=True, blank=True, help_text="When this side was ready: every one of its players pressed Ready."
    )
    win_probability = models.FloatField(
        "predicted win chance",
        null=True,
        blank=True,
        help_text="This side's chance to win when the queue formed the game (in a free-for-all, its mean chance "
        "against each other player).",
    )
    cancel_requested_at = models.DateTimeField(
        null=True, blank=True, help_text="When this side asked to cancel the match (it is cancelled when all agree)."
    )
    no_show_claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="When this side claimed the other did not play."
    )

    class Meta:
        ordering = ["match", "index"]
        constraints = [
            models.UniqueConstraint(fields=["match", "index"], name="side_unique_index"),
            models.CheckConstraint(
                condition=Q(placement__isnull=True) | Q(placement__gte=1), name="side_placement_at_least_one"
            ),
        ]

    def __str__(self) -> str:
        return f"side {self.index + 1} of match {self.match_id}"


class Participant(models.Model):
    # The unique (match, player) and the (player, match) indexes serve look-ups by either, so
    # neither has a single-column index of its own for every report to keep up.
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="participants", db_index=False)
    side = models.ForeignKey(MatchSide, on_delete=models.CASCADE, related_name="participants")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="participations", db_index=False
    )
    ready_at = models.DateTimeField(null=True, blank=True, help_text="When this player pressed Ready.")

    class Meta:
        ordering = ["side__index", "id"]
        constraints = [models.UniqueConstraint(fields=["match", "player"], name="participant_once_per_match")]
        indexes = [models.Index(fields=["player", "match"], name="participant_player_match")]

    def __str__(self) -> str:
        return f"{self.player_id} in match {self.match_id}"
