"""What the nightly job leaves behind: a record of each run and the leaderboard snapshots."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from ladder.models.ladder import LeaderboardScale


class NightlyRun(models.Model):
    """One nightly job of one ladder for one local midnight (docs/rules.md §16); append-only.

    It exists for three reasons. Moderators see in the admin when a ladder last ran and
    how long it took. Its unique (ladder, midnight) makes a second run for the same
    midnight do nothing. And ``last_event_id`` places the materialisation in the ladder's
    rating log: every event up to that id was applied before the RDs were written back,
    every later one after, which is what a replay needs to reproduce the queue's clock
    reset (it keeps the *stored* RD, so it depends on when that RD was last written).
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="nightly_runs")
    midnight = models.DateTimeField(help_text="The ladder's local midnight the ratings were materialised to.")
    date = models.DateField(help_text="The local date that begins at that midnight.")
    materialised = models.PositiveIntegerField(help_text="Ratings whose RD was written back at that midnight.")
    snapshot_rows = models.PositiveIntegerField(default=0, help_text="Ranked players kept in the snapshot.")
    last_event_id = models.BigIntegerField(
        null=True, blank=True, help_text="The ladder's last rating event when the RDs were written (for replays)."
    )
    started_at = models.DateTimeField()
    materialise_seconds = models.FloatField("materialisation (s)")
    snapshot_seconds = models.FloatField("snapshot (s)")
    duration_seconds = models.FloatField("duration (s)")

    class Meta:
        ordering = ["-midnight", "ladder_id"]
        constraints = [models.UniqueConstraint(fields=["ladder", "midnight"], name="nightly_one_run_per_midnight")]

    def __str__(self) -> str:
        return f"{self.ladder} nightly for {self.date:%Y-%m-%d}"


class LeaderboardSnapshot(models.Model):
    """The ranked leaderboard of one ladder at one local midnight: the top ``size`` players.

    Rank history, the leaderboard's rank changes and the movers box read these, so no
    page ever has to rebuild a past ranking from the rating history.
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="snapshots")
    date = models.DateField(help_text="The local date that begins at the snapshot's midnight.")
    midnight = models.DateTimeField(help_text="The instant RDs were taken at.")
    taken_at = models.DateTimeField()
    scale = models.CharField(max_length=12, choices=LeaderboardScale.choices)
    size = models.PositiveIntegerField(help_text="How many ranked players the snapshot was allowed to keep.")
    member_count = models.PositiveIntegerField()
    ranked_count = models.PositiveIntegerField()
    provisional_count = models.PositiveIntegerField(help_text="Members whose RD was above the provisional threshold.")

    class Meta:
        ordering = ["-date"]
        get_latest_by = "date"
        constraints = [models.UniqueConstraint(fields=["ladder", "date"], name="snapshot_one_per_ladder_date")]

    def __str__(self) -> str:
        return f"{self.ladder} leaderboard on {self.date:%Y-%m-%d}"

    @property
    def is_complete(self) -> bool:
        """Whether every ranked player is in it (else only the top ``size``)."""
        return self.ranked_count <= self.size


class SnapshotEntry(models.Model):
    """One ranked player in a snapshot: rank, rating, RD at the midnight, display value."""

    snapshot = models.ForeignKey(LeaderboardSnapshot, on_delete=models.CASCADE, related_name="entries")
    rank = models.PositiveIntegerField()
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    rating = models.FloatField()
    rd = models.FloatField("RD")
    value = models.FloatField(help_text="The value on the ladder's leaderboard scale (GXE %, TR or conservative).")

    class Meta:
        ordering = ["snapshot_id", "rank"]
        verbose_name_plural = "snapshot entries"
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "rank"], name="snapshot_entry_one_per_rank"),
            models.UniqueConstraint(fields=["snapshot", "player"], name="snapshot_entry_one_per_player"),
            models.CheckConstraint(condition=Q(rank__gte=1), name="snapshot_entry_rank_positive"),
        ]
        indexes = [models.Index(fields=["player", "snapshot"], name="snapshot_entry_player")]

    def __str__(self) -> str:
        return f"#{self.rank} {self.player_id}"
