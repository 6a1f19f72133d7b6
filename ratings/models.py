"""A player's standing in one ladder."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from ratings.engines import time as rd_time


class PlayerRatingQuerySet(models.QuerySet["PlayerRating"]):
    def members(self) -> PlayerRatingQuerySet:
        """Ratings of players currently in their ladder (leaving keeps the row, inactive)."""
        return self.filter(is_active=True)


class PlayerRating(models.Model):
    """One row per player per ladder, created with the ladder's initial values on joining.

    ``rd`` is valid at ``rd_as_of``; the RD shown or used at any other instant is derived
    by ``rd_at`` (SPEC §1) and never stored per day. Leaving a ladder keeps the row (and
    so the rating) with ``is_active`` off: rejoining restores it rather than resetting,
    so nobody can leave to shed a bad rating.
    """

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ratings")
    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.PROTECT, related_name="ratings")
    rating = models.FloatField()
    rd = models.FloatField("RD")
    volatility = models.FloatField("volatility σ")
    rd_as_of = models.DateTimeField("RD as of", help_text="The instant the stored RD is valid for.")
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    last_played_at = models.DateTimeField(null=True, blank=True)
    joined_at = models.DateTimeField(default=timezone.now)
    is_active = models.BooleanField("member", default=True, help_text="Off once the player has left the ladder.")
    left_at = models.DateTimeField(null=True, blank=True)

    objects = PlayerRatingQuerySet.as_manager()

    class Meta:
        verbose_name = "player rating"
        constraints = [
            models.UniqueConstraint(fields=["player", "ladder"], name="rating_one_per_player_per_ladder"),
            models.CheckConstraint(condition=Q(rd__gt=0), name="rating_rd_positive"),
            models.CheckConstraint(condition=Q(volatility__gt=0), name="rating_volatility_positive"),
            models.CheckConstraint(
                condition=Q(games__gte=F("wins") + F("losses") + F("draws")), name="rating_results_within_games"
            ),
        ]
        indexes = [models.Index(fields=["ladder", "is_active", "rating"], name="rating_ladder_active_rating")]

    def __str__(self) -> str:
        return f"{self.player} in {self.ladder}"

    def rd_at(self, when: datetime) -> float:
        """The RD at ``when`` under the ladder's engine (SPEC §1, §4), from the stored RD and ``rd_as_of``."""
        from ladder.models import RatingEngine

        ladder = self.ladder
        elapsed_days = max((when - self.rd_as_of).total_seconds(), 0.0) / rd_time.SECONDS_PER_DAY
        if ladder.engine == RatingEngine.TGR:
            return rd_time.tgr_rd(self.rd, days=elapsed_days, sc=ladder.rd_growth_per_day, rd_max=ladder.rd_max)
        periods = elapsed_days / ladder.rating_period_days
        if ladder.engine == RatingEngine.GLICKO1:
            return rd_time.glicko1_rd(self.rd, periods=periods, c=ladder.glicko_c, rd_max=ladder.rd_max)
        if ladder.engine == RatingEngine.GLICKO2:
            return rd_time.glicko2_rd(self.rd, periods=periods, volatility=self.volatility, rd_max=ladder.rd_max)
        return self.rd  # Elo has no deviation; the stored initial value is kept for display.

    def is_provisional_at(self, when: datetime) -> bool:
        return self.rd_at(when) > self.ladder.provisional_rd
