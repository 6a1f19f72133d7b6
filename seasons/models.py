"""A ladder's seasons: archived standings, peak ranks, badges and the soft reset (docs/seasons.md)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.urls import reverse


class SeasonStatus(models.TextChoices):
    SCHEDULED = "scheduled", "Scheduled"
    RUNNING = "running", "Running"
    CLOSED = "closed", "Closed"


class Season(models.Model):
    """A stretch of a ladder's play with a name, a start and an end.

    At its end the beat closes it (``seasons.services.season_close``): the final standings
    are archived, badges awarded, the ladder's soft reset applied and the next scheduled
    season started. A closed season never changes again.
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="seasons")
    name = models.CharField(max_length=80)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    status = models.CharField(max_length=10, choices=SeasonStatus, default=SeasonStatus.SCHEDULED)
    closed_at = models.DateTimeField(null=True, blank=True)
    ranked_count = models.PositiveIntegerField(default=0, help_text="Players ranked at the close.")
    reset = models.OneToOneField(
        "ratings.RatingReset",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="season",
        help_text="The soft reset applied at the close (empty: the ladder resets nothing).",
    )

    class Meta:
        ordering = ["-starts_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(ends_at__gt=F("starts_at")), name="season_ends_after_start"),
            models.UniqueConstraint(
                fields=["ladder"], condition=Q(status="running"), name="season_one_running_per_ladder"
            ),
            models.CheckConstraint(
                condition=Q(status="closed", closed_at__isnull=False)
                | (~Q(status="closed") & Q(closed_at__isnull=True)),
                name="season_closed_at_when_closed",
            ),
        ]
        indexes = [models.Index(fields=["status", "ends_at"], name="season_status_end")]

    def __str__(self) -> str:
        return f"{self.name} ({self.ladder})"

    def get_absolute_url(self) -> str:
        return reverse("seasons:detail", args=[self.ladder.slug, self.pk])

    @property
    def is_closed(self) -> bool:
        return self.status == SeasonStatus.CLOSED

    def clean(self) -> None:
        """A ladder's seasons never overlap: a game belongs to at most one season."""
        if self.ladder_id is None or self.starts_at is None or self.ends_at is None:
            return
        if self.ends_at <= self.starts_at:
            raise ValidationError({"ends_at": "A season ends after it starts."})
        overlapping = Season.objects.filter(
            ladder_id=self.ladder_id, starts_at__lt=self.ends_at, ends_at__gt=self.starts_at
        ).exclude(pk=self.pk)
        other = overlapping.first()
        if other is not None:
            raise ValidationError(
                f"This overlaps {other.name} ({other.starts_at:%Y-%m-%d %H:%M} to {other.ends_at:%Y-%m-%d %H:%M} UTC)."
            )


class ResetMode(models.TextChoices):
    SOFT = "soft", "Soft reset towards the center"
    NONE = "none", "No reset"


class SeasonSettings(models.Model):
    """How a ladder's ratings are reset when one of its seasons closes.

    ``r' = r0 + f·(r − r0)`` and ``RD' = max(RD, RD_reset)`` (``ratings.resets``), or
    nothing with the "no reset" mode. A ladder without settings resets nothing.
    """

    ladder = models.OneToOneField("ladder.Ladder", on_delete=models.CASCADE, related_name="season_settings")
    mode = models.CharField(max_length=8, choices=ResetMode, default=ResetMode.SOFT)
    factor = models.FloatField(
        "reset factor f", default=0.5, help_text="How much of the distance to the center a rating keeps (0 to 1)."
    )
    center = models.FloatField(
        "center r0", null=True, blank=True, help_text="Ratings move towards this; empty: the ladder's initial rating."
    )
    rd_reset = models.FloatField(
        "RD after reset", null=True, blank=True, help_text="Smaller RDs are raised to it; empty: RDs stay."
    )

    class Meta:
        verbose_name = "season settings"
        verbose_name_plural = "season settings"
        constraints = [
            models.CheckConstraint(condition=Q(factor__gte=0, factor__lte=1), name="season_factor_in_unit_range"),
            models.CheckConstraint(
                condition=Q(rd_reset__isnull=True) | Q(rd_reset__gt=0), name="season_rd_reset_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"season settings of {self.ladder}"

    def clean(self) -> None:
        if self.rd_reset is not None and self.ladder_id is not None and self.rd_reset > self.ladder.rd_max:
            raise ValidationError(
                {"rd_reset": f"The RD after a reset may not exceed the ladder's RD cap, {self.ladder.rd_max:g}."}
            )


class SeasonStanding(models.Model):
    """One player's archived result in a closed season.

    Everyone ranked at the close has a ``rank``; a player who reached the daily leaderboard
    during the season but was not ranked at its end is kept too, with ``rank`` empty, for
    their peak. ``peak_rating``: the highest rating after any of their games or adjustments
    within the season (from the rating history, exact). ``peak_rank``: the best of their
    ranks in the ladder's daily snapshots within the season and their final rank.
    """

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="standings")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="season_standings")
    rank = models.PositiveIntegerField(null=True, blank=True)
    rating = models.FloatField()
    rd = models.FloatField("RD")
    value = models.FloatField(help_text="The value on the ladder's leaderboard scale at the close.")
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    peak_rank = models.PositiveIntegerField(null=True, blank=True)
    peak_rating = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = [F("rank").asc(nulls_last=True), "peak_rank", "id"]
        constraints = [
            models.UniqueConstraint(fields=["season", "player"], name="season_standing_one_per_player"),
            models.UniqueConstraint(fields=["season", "rank"], name="season_standing_one_per_rank"),
        ]
        indexes = [models.Index(fields=["player", "season"], name="season_standing_player")]

    def __str__(self) -> str:
        return f"#{self.rank or '-'} {self.player_id} in season {self.season_id}"


class BadgeBasis(models.TextChoices):
    PEAK = "peak", "Peak rank during the season"
    FINAL = "final", "Final rank"


class BadgeTier(models.Model):
    """A badge a ladder gives at each season's close to its top ``top_n`` by peak or final rank."""

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="badge_tiers")
    name = models.CharField(max_length=40, help_text="Shown on the badge, e.g. “Champion” or “Top 10”.")
    top_n = models.PositiveIntegerField("top N", help_text="Players ranked this high or better get it.")
    basis = models.CharField(max_length=8, choices=BadgeBasis, default=BadgeBasis.FINAL)

    class Meta:
        ordering = ["ladder_id", "top_n", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(top_n__gte=1), name="badge_tier_top_n_positive"),
            models.UniqueConstraint(fields=["ladder", "name"], name="badge_tier_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (top {self.top_n}, {self.basis})"


class Badge(models.Model):
    """A badge a player earned in a season: at most one per player and season, the best tier."""

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="badges")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="season_badges")
    tier = models.ForeignKey(BadgeTier, on_delete=models.PROTECT, related_name="badges")
    rank = models.PositiveIntegerField(help_text="The rank (peak or final, as the tier says) that earned it.")

    class Meta:
        ordering = ["season_id", "rank", "id"]
        constraints = [models.UniqueConstraint(fields=["season", "player"], name="badge_one_per_player_season")]
        indexes = [models.Index(fields=["player", "season"], name="badge_player_season")]

    def __str__(self) -> str:
        return f"{self.tier.name} for {self.player_id} in season {self.season_id}"
