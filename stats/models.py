"""Aggregates kept as matches are rated: win rates per match-field value and head-to-head records.

Each row is a running sum over the ladder's active rated matches, updated in the
transaction that rates a match (``stats.services.stats_add_matches``) and rebuilt from the
history by every replay (``stats.services.stats_rebuild``), so a page reads a few rows
instead of scanning millions of matches (docs/statistics.md).

A *result* is one player's outcome in one match, from the match's history rows: ``score``
is the mean of the pair scores against the other sides (1 a win, ½ a draw, 0 a loss; in a
free-for-all the share of the others beaten), and the result is a win above ½, a loss
below, a draw at ½. Its *expectation* is the site's pre-match win probability
(``ratings.engines.win_probability`` from both players' ``rating_before`` and
``rd_at_event``), averaged over every player on another side. ``score_sum`` against
``expected_sum`` is the rating-adjusted comparison (draws count half).

The rows are derived data, deleted and written again by every replay, so their foreign keys
are not checked by the database (each rebuild of a big ladder would check millions at
commit), and only the indexes the reads and the upserts use are kept (each index of the
head-to-head table slowed a rebuild's insert of a million rows by several seconds); deleting
a ladder, a field or a user still deletes their rows (Django's cascade).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class Record(models.Model):
    """Counts of results and the sums that compare them with the ratings' expectation."""

    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    score_sum = models.FloatField(default=0.0, help_text="The results' scores added up: a draw counts ½.")
    expected_sum = models.FloatField(default=0.0, help_text="The pre-match win probabilities added up.")

    class Meta:
        abstract = True

    @property
    def win_rate(self) -> float | None:
        """Wins and half the draws over the games (None before any game)."""
        return None if not self.games else (self.wins + 0.5 * self.draws) / self.games

    @property
    def actual_rate(self) -> float | None:
        """The mean score: the win rate with each result's share (a free-for-all's places count)."""
        return None if not self.games else self.score_sum / self.games

    @property
    def expected_rate(self) -> float | None:
        """The mean pre-match win probability: what the ratings expected of these results."""
        return None if not self.games else self.expected_sum / self.games


class HeadToHead(models.Model):
    """Two players' record against each other in one ladder, the player with the lower id first.

    Every rated match where the two played on different sides counts once: the better
    placement wins, the same placement draws. ``expected_low_sum`` adds up the low
    player's pre-match win probability against the high player.
    """

    ladder = models.ForeignKey(
        "ladder.Ladder", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    player_low = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    player_high = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    games = models.PositiveIntegerField(default=0)
    low_wins = models.PositiveIntegerField(default=0)
    high_wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    expected_low_sum = models.FloatField(default=0.0)

    class Meta:
        verbose_name = "head-to-head record"
        constraints = [
            models.UniqueConstraint(fields=["ladder", "player_low", "player_high"], name="h2h_one_per_pair"),
            models.CheckConstraint(condition=Q(player_low__lt=F("player_high")), name="h2h_low_below_high"),
        ]

    def __str__(self) -> str:
        return f"{self.player_low_id} v {self.player_high_id} in ladder {self.ladder_id}"


class FieldValueStat(Record):
    """A ladder's record per value of a match field.

    A per-player field (a tribe) counts every player's result with their value once. A
    per-match field (a map) counts one result per match: the favourite's, the player
    with the highest expectation (the first side's on a tie), so the row says how often
    favourites win on that map against how often the ratings said they would.
    """

    ladder = models.ForeignKey(
        "ladder.Ladder", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    field = models.ForeignKey(
        "ladder.MatchField", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    value = models.CharField(max_length=500)

    class Meta:
        verbose_name = "field value statistic"
        constraints = [models.UniqueConstraint(fields=["field", "value"], name="field_stat_one_per_value")]
        indexes = [models.Index(fields=["ladder", "field"], name="field_stat_ladder_field")]

    def __str__(self) -> str:
        return f"{self.field_id}={self.value}: {self.games} games"


class PlayerFieldStat(Record):
    """A player's record per value of a match field: their tribe, or the map they played on.

    Each of the player's results with the value counts once (per-player fields: the
    player's own value; per-match fields: the match's value).
    """

    ladder = models.ForeignKey(
        "ladder.Ladder", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    field = models.ForeignKey(
        "ladder.MatchField", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    value = models.CharField(max_length=500)
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )

    class Meta:
        verbose_name = "player field statistic"
        constraints = [
            models.UniqueConstraint(fields=["player", "field", "value"], name="player_field_stat_one_per_value")
        ]
        indexes = [models.Index(fields=["ladder", "player"], name="player_field_stat_player")]

    def __str__(self) -> str:
        return f"{self.player_id} {self.field_id}={self.value}: {self.games} games"
