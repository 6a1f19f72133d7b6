"""The games of a best-of-N series (docs/rules.md §13, "Series").

A match the queue pairs in a ladder with ``best_of`` above 1 stands for the whole series:
its games are recorded here one by one, and the ladder says how they are rated (each game
as its own match, ``game_match``, or the series once, on the paired match itself).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SeriesGame(models.Model):
    """One game of a series: its number and which side won it (none: a draw)."""

    match = models.ForeignKey(
        "ladder.Match", on_delete=models.CASCADE, related_name="series_games", help_text="The paired match: the series."
    )
    number = models.PositiveSmallIntegerField(help_text="1 for the series' first game, and so on.")
    winner_side = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The index of the side that won this game; empty: a draw."
    )
    reported_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reported_at = models.DateTimeField()
    game_match = models.ForeignKey(
        "ladder.Match",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="series_game_of",
        help_text="The rated match of this game, when the ladder rates each game of a series.",
    )

    class Meta:
        ordering = ["match", "number"]
        constraints = [models.UniqueConstraint(fields=["match", "number"], name="series_game_unique_number")]

    def __str__(self) -> str:
        return f"game {self.number} of match {self.match_id}"
