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
    by ``rd_at`` (docs/rules.md §1) and never stored per day. Leaving a ladder keeps the row (and
    so the rating) with ``is_active`` off: rejoining restores it rather than resetting,
    so nobody can leave to shed a bad rating.
    """

    # A rated match updates the row's rating, which an index holds, so every index of the table
    # takes a new entry: the unique (player, ladder) and the (ladder, is_active, rating) indexes
    # serve look-ups by either key alone, and neither has a single-column index of its own.
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ratings", db_index=False
    )
    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.PROTECT, related_name="ratings", db_index=False)
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
        """The RD at ``when`` under the ladder's engine (docs/rules.md §1), from the stored RD and ``rd_as_of``."""
        return self.ladder.get_engine().rd_at(self.state(), when.timestamp())

    def is_provisional_at(self, when: datetime) -> bool:
        return is_provisional(self.rd_at(when), self.ladder.provisional_rd)

    def display_at(self, when: datetime) -> Display:
        """GLIXARE, TR, conservative and provisional status with the RD at ``when`` (docs/rules.md §10)."""
        return display(self.rating, self.rd_at(when), self.ladder.provisional_rd)


class EventKind(models.TextChoices):
    MATCH = "match", "Match"
    ADJUSTMENT = "adjustment", "Adjustment"
    SEASON = "season", "Season reset"


class ChangeKind(models.TextChoices):
    MATCH = "match", "Match"
    ADJUSTMENT = "adjustment", "Adjustment"
    SEASON = "season", "Season reset"
    REPLAY = "replay", "Replay"


class AdjustmentKind(models.TextChoices):
    MANUAL = "manual", "Moderator adjustment"
    QUEUE_TIMEOUT = "queue_timeout", "Searched without a pairing"
    REFUND = "refund", "Refund of points lost to a booster or cheater"


# The most a moderator's adjustment moves a rating either way (``ratings.services.adjustment_check``).
ADJUSTMENT_MAX_DELTA = 1_000.0


class RatingAdjustment(models.Model):
    """A change to one rating outside a match, with the reason. Replays apply it again.

    Moderators make ``manual`` ones. The queue makes ``queue_timeout`` ones: a player who
    searched for the whole timeout counts as active, so ``rd_as_of`` moves to that instant
    without the RD growing (docs/rules.md §13); logging it keeps replays exact.
    """

    kind = models.CharField(max_length=16, choices=AdjustmentKind, default=AdjustmentKind.MANUAL)
    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.PROTECT, related_name="adjustments")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="rating_adjustments")
    rating_delta = models.FloatField(default=0.0, help_text="Added to the rating.")
    new_rd = models.FloatField("new RD", null=True, blank=True, help_text="Replaces the RD; empty keeps it.")
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    refund_for = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="A refund: the booster or cheater whose games it gives back points lost to.",
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(new_rd__isnull=True) | Q(new_rd__gt=0), name="adjustment_rd_positive"),
            models.CheckConstraint(condition=~Q(reason=""), name="adjustment_has_reason"),
            models.CheckConstraint(
                condition=Q(rating_delta__gte=-ADJUSTMENT_MAX_DELTA, rating_delta__lte=ADJUSTMENT_MAX_DELTA),
                name="adjustment_delta_bounded",
                violation_error_message="The rating change must be a number from -1,000 to +1,000.",
            ),
        ]

    def __str__(self) -> str:
        return f"adjustment of {self.player} in {self.ladder}"


class RatingReset(models.Model):
    """A season's soft reset of every rating of a ladder, at one instant; replays apply it again.

    Each rating becomes ``center + factor·(rating − center)`` and its RD
    ``max(RD at the instant, rd_reset)`` (the RD grown to ``at`` by the engine, then floored),
    valid from ``at`` (``ratings.resets``). A factor of 1 without ``rd_reset`` changes nothing
    but the RD's clock; the seasons app does not record a reset for a ladder without one.
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.PROTECT, related_name="rating_resets")
    at = models.DateTimeField(help_text="The instant the reset applies at (the season's end).")
    center = models.FloatField("center r0", help_text="Ratings move towards this value.")
    factor = models.FloatField("factor f", help_text="How much of the distance to the center is kept (0 to 1).")
    rd_reset = models.FloatField("RD after reset", null=True, blank=True, help_text="Smaller RDs are raised to it.")
    reason = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "rating reset"
        constraints = [
            models.CheckConstraint(condition=Q(factor__gte=0, factor__lte=1), name="reset_factor_in_unit_range"),
            models.CheckConstraint(condition=Q(rd_reset__isnull=True) | Q(rd_reset__gt=0), name="reset_rd_positive"),
            models.CheckConstraint(condition=~Q(reason=""), name="reset_has_reason"),
        ]

    def __str__(self) -> str:
        return f"reset of {self.ladder} at {self.at:%Y-%m-%d %H:%M}"


class RatingEvent(models.Model):
    """The ladder's rating log: one row per rated match, adjustment or season reset, in the order applied.

    The primary key is the order. It is taken only after the rows of every rating the
    event touches are locked, so two events that share a player are numbered in the order
    they really happened, and replaying the log by id reproduces the live ratings.
    """

    # The (ladder, id) index serves look-ups by ladder: no single-column index of its own. Nor
    # is the key checked by PostgreSQL: every event of a ladder would share-lock the ladder's
    # row at commit (``ladder.Match.ladder`` says why that costs); ladders are never deleted
    # while they have events (PROTECT, enforced by Django).
    ladder = models.ForeignKey(
        "ladder.Ladder", on_delete=models.PROTECT, related_name="rating_events", db_index=False, db_constraint=False
    )
    kind = models.CharField(max_length=10, choices=EventKind)
    match = models.OneToOneField(
        "ladder.Match", null=True, blank=True, on_delete=models.PROTECT, related_name="rating_event"
    )
    adjustment = models.OneToOneField(
        RatingAdjustment, null=True, blank=True, on_delete=models.PROTECT, related_name="rating_event"
    )
    reset = models.OneToOneField(
        RatingReset, null=True, blank=True, on_delete=models.PROTECT, related_name="rating_event"
    )
    is_active = models.BooleanField(default=True, help_text="Off once the match is void; replays skip it.")
    at = models.DateTimeField(help_text="The instant the ratings were computed for (a match's played-at time).")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="match", match__isnull=False, adjustment__isnull=True, reset__isnull=True)
                | Q(kind="adjustment", match__isnull=True, adjustment__isnull=False, reset__isnull=True)
                | Q(kind="season", match__isnull=True, adjustment__isnull=True, reset__isnull=False),
                name="event_kind_matches_its_subject",
            ),
        ]
        indexes = [models.Index(fields=["ladder", "id"], name="event_ladder_order")]

    def __str__(self) -> str:
        return f"{self.kind} event {self.pk}"


class ChangeValues(models.Model):
    """What a history row records: the standing before and after one event for one player."""

    kind = models.CharField(max_length=10, choices=ChangeKind)
    rating_before = models.FloatField()
    rd_before = models.FloatField("RD before")
    volatility_before = models.FloatField()
    rd_as_of_before = models.DateTimeField()
    rd_at_event = models.FloatField("RD at the event", help_text="The RD the update started from.")
    rating_after = models.FloatField()
    rd_after = models.FloatField("RD after")
    volatility_after = models.FloatField()
    rd_as_of_after = models.DateTimeField()
    expected = models.FloatField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    delta = models.FloatField()
    engine = models.CharField(max_length=10)
    engine_params = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True


class RatingChange(ChangeValues):
    """History: one row per player per rating event, append-only.

    A replay never edits a row: it moves the rows it recomputes, unchanged, to
    ``SupersededChange`` and writes new ones of kind ``replay``, so what a player once saw
    stays on record. This table holds the current history only.
    """

    # History rows are written only by the rating services and replays, in the transaction
    # that numbers their event, and events are never deleted. So no foreign key is checked
    # per row at commit, which was most of a big replay's commit time (2M checks for 1M
    # matches); deletion stays PROTECTed in Django. ``ladder`` and ``match`` repeat the
    # event's, for queries, and ``player`` is one of the event's players; the composite
    # indexes below serve the queries, so none of them has its own single-column index.
    event = models.ForeignKey(
        RatingEvent, on_delete=models.PROTECT, related_name="changes", db_index=False, db_constraint=False
    )
    ladder = models.ForeignKey(
        "ladder.Ladder", on_delete=models.PROTECT, related_name="rating_changes", db_constraint=False, db_index=False
    )
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="rating_changes",
        db_constraint=False,
        db_index=False,
    )
    match = models.ForeignKey(
        "ladder.Match",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="rating_changes",
        db_constraint=False,
        db_index=False,
    )

    class Meta:
        ordering = ["event_id", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(rd_before__gt=0) & Q(rd_after__gt=0), name="change_rd_positive"),
            models.UniqueConstraint(fields=["event", "player"], name="change_one_per_event_player"),
        ]
        indexes = [
            models.Index(fields=["ladder", "player", "event"], name="change_ladder_player_event"),
            models.Index(fields=["match"], name="change_match"),
        ]

    def __str__(self) -> str:
        return f"{self.player} {self.delta:+.1f} ({self.kind})"


class SupersededChange(ChangeValues):
    """A history row a replay recomputed, moved here unchanged (with its id) when the replay
    wrote its successor: the record of what a player once saw.

    Moving a row (``DELETE … RETURNING`` into an ``INSERT``) costs a third of marking it in
    place, which rewrote every index entry of the row: that was most of the time of
    replaying a ladder with a long history. Only the primary key is indexed; the table is
    read in the admin, rarely.
    """

    id = models.BigIntegerField(primary_key=True, help_text="The row's id when it was current.")
    event = models.ForeignKey(
        RatingEvent, on_delete=models.DO_NOTHING, related_name="+", db_constraint=False, db_index=False
    )
    ladder = models.ForeignKey(
        "ladder.Ladder", on_delete=models.DO_NOTHING, related_name="+", db_constraint=False, db_index=False
    )
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, related_name="+", db_constraint=False, db_index=False
    )
    match = models.ForeignKey(
        "ladder.Match",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    superseded_at = models.DateTimeField(
        null=True, blank=True, help_text="When a replay replaced it (empty for rows replaced before this was kept)."
    )

    class Meta:
        ordering = ["event_id", "id"]

    def __str__(self) -> str:
        return f"{self.player_id} {self.delta:+.1f} ({self.kind}, superseded)"


class ReplayJobKind(models.TextChoices):
    VOID = "void", "Void"
    CORRECT = "correct", "Correction"
    REPLAY = "replay", "Replay"
    WITHDRAW = "withdraw", "Withdrawn adjustment"


class ReplayJobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ReplayJobQuerySet(models.QuerySet["ReplayJob"]):
    def unfinished(self) -> ReplayJobQuerySet:
        """Jobs whose replay has not yet committed: queued, running, or failed (waiting for another run)."""
        return self.exclude(status=ReplayJobStatus.DONE)

    def covering_event(self, event_id: int) -> ReplayJobQuerySet:
        """Jobs whose replay recomputes the event ``event_id`` (and every later one)."""
        return self.filter(Q(from_event_id__isnull=True) | Q(from_event_id__lte=event_id))


class ReplayJob(models.Model):
    """A moderator's decision waiting for (or done with) its replay, run by a Celery worker.

    Voiding or correcting a rated match, or replaying a whole ladder, is recorded at once
    in the request (the match is void, the placements are corrected); the ladder's ratings
    follow when the replay from ``from_event`` commits, with the job marked done in the
    same transaction. A replay run covers every unfinished job of its ladder, from the
    earliest event any of them names, so two decisions in a row cost one replay.
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.PROTECT, related_name="replay_jobs")
    kind = models.CharField(max_length=10, choices=ReplayJobKind)
    match = models.ForeignKey(
        "ladder.Match", null=True, blank=True, on_delete=models.PROTECT, related_name="replay_jobs"
    )
    from_event = models.ForeignKey(
        RatingEvent,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The replay starts at this event; empty replays the whole history.",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=ReplayJobStatus, default=ReplayJobStatus.QUEUED)
    events_done = models.PositiveBigIntegerField(default=0)
    events_total = models.PositiveBigIntegerField(null=True, blank=True, help_text="Known once the replay starts.")
    error = models.TextField(blank=True, help_text="Why the last run failed.")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the worker running it last reported progress; the sweep fails a job whose worker is gone.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ReplayJobQuerySet.as_manager()

    class Meta:
        verbose_name = "replay job"
        constraints = [
            models.CheckConstraint(
                condition=Q(events_total__isnull=True) | Q(events_done__lte=F("events_total")),
                name="replay_job_done_within_total",
            ),
        ]
        indexes = [models.Index(fields=["ladder", "status"], name="replay_job_ladder_status")]

    def __str__(self) -> str:
        return f"{self.get_kind_display().lower()} job {self.pk} in ladder {self.ladder_id}"

    @property
    def percent(self) -> int | None:
        """Whole percent of the events replayed, once the total is known."""
        if self.status == ReplayJobStatus.DONE:
            return 100
        if not self.events_total:
            return None
        return min(100, 100 * self.events_done // self.events_total)

    @property
    def is_pending(self) -> bool:
        return self.status in (ReplayJobStatus.QUEUED, ReplayJobStatus.RUNNING)


class SettingsChangeMode(models.TextChoices):
    FROM_NOW_ON = "from_now_on", "From now on (history unchanged)"
    RERATE = "rerate", "Re-rate the whole history under the new settings"


class RatingSettingsChange(models.Model):
    """A moderator's change of a ladder's rating settings, with the reason; append-only.

    Once a ladder has rated games its rating settings change only through
    ``ladder.standings.rating_settings``, which writes one of these. ``from_now_on`` keeps
    the history: events after ``after_event_id`` use the new values, and every RD was
    written back at ``created_at`` under the old ones, so idle time before the change grows
    the old way and idle time after it the new way; replays read that write-back from here.
    ``rerate`` replayed the whole history under the new values.
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.PROTECT, related_name="rating_settings_changes")
    mode = models.CharField(max_length=12, choices=SettingsChangeMode)
    old_values = models.JSONField(help_text="Every rating setting before the change.")
    new_values = models.JSONField(help_text="Every rating setting after the change.")
    reason = models.TextField()
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(
        default=timezone.now,
        help_text="When the change took effect; for a change from now on, RDs were written back at this instant.",
    )
    after_event_id = models.BigIntegerField(
        null=True, blank=True, help_text="The ladder's last rating event before the change (empty: none yet)."
    )
    materialised = models.PositiveIntegerField(default=0, help_text="Ratings whose RD was written back.")
    replayed_events = models.PositiveIntegerField(default=0, help_text="Events re-rated (re-rate only).")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "rating settings change"
        constraints = [models.CheckConstraint(condition=~Q(reason=""), name="settings_change_has_reason")]
        indexes = [models.Index(fields=["ladder", "id"], name="settings_change_ladder")]

    def __str__(self) -> str:
        return f"rating settings of {self.ladder} changed {self.created_at:%Y-%m-%d %H:%M} ({self.mode})"

    @property
    def changed_fields(self) -> list[str]:
        return [name for name, value in self.new_values.items() if self.old_values.get(name) != value]


class BacktestStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Backtest(models.Model):
    """A prediction-quality check of one ladder (docs/rules.md, "Prediction quality").

    Its confirmed history re-rated read-only under the ladder's settings, the baselines and
    tuned alternatives, each match's prediction taken before its update; ``result`` holds the
    metrics, the reliability bins and the recommended engine and parameters, as
    ``ratings.backtest`` reports them. Runs as a Celery task that moves ``progress`` and
    renews ``heartbeat_at``; at most one per ladder is queued or running (the constraint
    below), and one whose worker was lost is ended by ``backtests_end_stale``.
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="backtests")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=8, choices=BacktestStatus, default=BacktestStatus.QUEUED)
    progress = models.FloatField(default=0.0, help_text="From 0 to 1.")
    matches = models.PositiveIntegerField(default=0, help_text="Confirmed matches replayed.")
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the worker running it last said it was alive; the sweep fails a backtest silent too long.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["ladder", "-created_at"], name="backtest_ladder_latest")]
        constraints = [
            # One at a time: a second start while one is queued or running fails its insert.
            models.UniqueConstraint(
                fields=["ladder"],
                condition=Q(status__in=["queued", "running"]),
                name="backtest_one_unfinished_per_ladder",
                violation_error_message="A backtest of this ladder is already under way.",
            ),
        ]

    def __str__(self) -> str:
        return f"backtest {self.pk} of {self.ladder_id} ({self.status})"
