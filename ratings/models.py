"""A player's standing in one ladder."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from ratings.engines import Display, RatingState, display, is_provisional


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

    def state(self) -> RatingState:
        """This rating as the engines' value type."""
        return RatingState(self.rating, self.rd, self.volatility, self.rd_as_of.timestamp())

    def rd_at(self, when: datetime) -> float:
        """The RD at ``when`` under the ladder's engine (SPEC §1, §4), from the stored RD and ``rd_as_of``."""
        return self.ladder.get_engine().rd_at(self.state(), when.timestamp())

    def is_provisional_at(self, when: datetime) -> bool:
        return is_provisional(self.rd_at(when), self.ladder.provisional_rd)

    def display_at(self, when: datetime) -> Display:
        """GLIXARE, TR, conservative and provisional status with the RD at ``when`` (SPEC §8)."""
        return display(self.rating, self.rd_at(when), self.ladder.provisional_rd)
