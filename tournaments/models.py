"""A ladder's tournaments: their settings, entries, rounds and boards (docs/rules.md, "Tournaments").

A tournament belongs to one ladder; each game of it is a ladder match, paired by the
tournament instead of the queue, with the ladder's ready check, no-show claim, report,
confirmation and dispute. The pairing and the standings are the pure rules of
``tournaments.formats``; these tables keep what they need and what happened.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from tournaments.formats import TIEBREAKS, PointsRule

DEFAULT_TIEBREAKS = "buchholz_cut1,buchholz,sonneborn_berger,wins"


class Format(models.TextChoices):
    SWISS = "swiss", "Swiss"
    ROUND_ROBIN = "round_robin", "Round robin"
    SINGLE_ELIMINATION = "single_elimination", "Single elimination"
    DOUBLE_ELIMINATION = "double_elimination", "Double elimination"
    GROUPS = "groups", "Round-robin groups, then single elimination"
    FREE_FOR_ALL = "free_for_all", "Free-for-all pods"


class Status(models.TextChoices):
    REGISTRATION = "registration", "Registration open"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    FINISHED = "finished", "Finished"
    CANCELLED = "cancelled", "Cancelled"


class Tournament(models.Model):
    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="tournaments")
    name = models.CharField(max_length=80)
    slug = models.SlugField(max_length=80, help_text="In the tournament's address; unique in its ladder.")
    description = models.TextField(blank=True)
    format = models.CharField(max_length=20, choices=Format, default=Format.SWISS)
    team_size = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(4)],
        help_text="Players per entry: 1 for a tournament of players, 2 for teams of two (a 2 v 2 game), up to 4.",
    )
    rounds = models.PositiveSmallIntegerField(
        default=5,
        validators=[MinValueValidator(1), MaxValueValidator(30)],
        help_text="Swiss and free-for-all: how many rounds are played.",
    )
    double_round_robin = models.BooleanField(
        default=False, help_text="Round robin: everyone meets everyone twice instead of once."
    )
    groups = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(1), MaxValueValidator(32)],
        help_text="Groups then elimination: how many round-robin groups.",
    )
    advance = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(1), MaxValueValidator(8)],
        help_text="Groups then elimination: how many of each group go on to the elimination bracket.",
    )
    pod_size = models.PositiveSmallIntegerField(
        default=4,
        validators=[MinValueValidator(3), MaxValueValidator(8)],
        help_text="Free-for-all: the most players of a pod (3 to 8). Pods are as even as possible, three at least; "
        "a field too small for that gets larger pods.",
    )
    points_win = models.FloatField(default=1.0, validators=[MinValueValidator(0), MaxValueValidator(100)])
    points_draw = models.FloatField(default=0.5, validators=[MinValueValidator(0), MaxValueValidator(100)])
    points_loss = models.FloatField(default=0.0, validators=[MinValueValidator(0), MaxValueValidator(100)])
    points_bye = models.FloatField(
        default=1.0,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="What the round's bye is worth (an odd number of players leaves one without a game).",
    )
    points_absent = models.FloatField(
        default=0.5,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="What each round missed by a late entry is worth.",
    )
    tiebreaks = models.CharField(
        max_length=120,
        default=DEFAULT_TIEBREAKS,
        help_text="Tie-breaks in order, separated by commas: " + ", ".join(TIEBREAKS) + ".",
    )
    registration_closes_at = models.DateTimeField(help_text="Entries are taken until this instant.")
    starts_at = models.DateTimeField(help_text="The first round is paired at this instant, or when started.")
    check_in_minutes = models.PositiveIntegerField(
        default=30,
        validators=[MaxValueValidator(24 * 60)],
        help_text="Check-in opens this many minutes before the start; entries not checked in do not play. "
        "0: no check-in.",
    )
    round_minutes = models.PositiveIntegerField(
        default=24 * 60,
        validators=[MinValueValidator(5), MaxValueValidator(30 * 24 * 60)],
        help_text="Each round's play deadline, from its pairing; a game without a result by then goes to a moderator.",
    )
    min_rating = models.FloatField(null=True, blank=True, help_text="Entries need at least this ladder rating.")
    max_rating = models.FloatField(
        null=True,
        blank=True,
        help_text="Entries need at most this rating, now and at their highest of the last 7 days.",
    )
    min_games = models.PositiveIntegerField(default=0, help_text="Entries need at least this many rated games.")
    rated = models.BooleanField(
        default=True,
        help_text="Its games change ratings like any of the ladder's. Off: they are played, reported and "
        "confirmed the same way, and count in the tournament only.",
    )
    status = models.CharField(max_length=14, choices=Status, default=Status.REGISTRATION)
    current_round = models.PositiveSmallIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-starts_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["ladder", "slug"], name="tournament_slug_per_ladder"),
            models.CheckConstraint(
                condition=Q(registration_closes_at__lte=F("starts_at")), name="tournament_registration_before_start"
            ),
        ]
        indexes = [models.Index(fields=["status", "starts_at"], name="tournament_status_start")]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("tournaments:detail", args=[self.ladder.slug, self.slug])

    def clean(self) -> None:
        """Points the standings can use (a win worth more than a loss, a draw between them); a
        free-for-all of players, on a ladder that takes free-for-all games of its pods' size."""
        try:
            self.rule  # noqa: B018 - the rule checks itself
        except ValueError as error:
            raise ValidationError({"points_win": str(error).capitalize() + "."}) from error
        if self.format == Format.FREE_FOR_ALL:
            if self.team_size != 1:
                raise ValidationError({"team_size": "A free-for-all tournament is for players: a team size of 1."})
            ladder = self.ladder if self.ladder_id else None
            if ladder is not None and not ladder.allow_free_for_all:
                raise ValidationError(
                    {"format": f"{ladder.name} does not take free-for-all games: allow them in its settings first."}
                )
            if ladder is not None and ladder.max_players is not None and self.pod_size > ladder.max_players:
                raise ValidationError(
                    {"pod_size": f"{ladder.name} takes games of at most {ladder.max_players} players."}
                )

    @property
    def rule(self) -> PointsRule:
        return PointsRule(
            win=self.points_win,
            draw=self.points_draw,
            loss=self.points_loss,
            bye=self.points_bye,
            absent=self.points_absent,
        )

    @property
    def tiebreak_list(self) -> list[str]:
        return [code for code in (part.strip() for part in self.tiebreaks.split(",")) if code]

    @property
    def is_free_for_all(self) -> bool:
        return self.format == Format.FREE_FOR_ALL

    @property
    def is_elimination(self) -> bool:
        return self.format in (Format.SINGLE_ELIMINATION, Format.DOUBLE_ELIMINATION)


class EntryStatus(models.TextChoices):
    REGISTERED = "registered", "Registered"
    CHECKED_IN = "checked_in", "Checked in"
    PLAYING = "playing", "Playing"
    WITHDRAWN = "withdrawn", "Withdrawn"
    ELIMINATED = "eliminated", "Eliminated"


class Entry(models.Model):
    """A player, or a team of ``team_size`` players who registered together."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    name = models.CharField(max_length=80)
    captain = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=12, choices=EntryStatus, default=EntryStatus.REGISTERED)
    rating = models.FloatField(help_text="The seed: the ladder rating (a team's mean) when the tournament started.")
    seed = models.PositiveIntegerField(null=True, blank=True)
    group = models.PositiveSmallIntegerField(null=True, blank=True)
    joined_round = models.PositiveSmallIntegerField(default=1, help_text="A late entry joins at this round.")
    registered_at = models.DateTimeField()
    checked_in_at = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    withdrawn_reason = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["seed", "registered_at", "id"]
        constraints = [models.UniqueConstraint(fields=["tournament", "name"], name="entry_name_per_tournament")]
        verbose_name_plural = "entries"

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.status in (EntryStatus.REGISTERED, EntryStatus.CHECKED_IN, EntryStatus.PLAYING)


class EntryMember(models.Model):
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="members")
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="+")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tournament_entries")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tournament", "player"], name="one_entry_per_player")]

    def __str__(self) -> str:
        return f"{self.player_id} in {self.entry_id}"


class Round(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="round_set")
    number = models.PositiveSmallIntegerField()
    stage = models.CharField(max_length=10, default="main", help_text="main, groups or playoffs")
    started_at = models.DateTimeField()
    deadline = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["tournament", "number"], name="round_number_per_tournament")]

    def __str__(self) -> str:
        return f"Round {self.number}"


class BoardKind(models.TextChoices):
    PLAYED = "played", "Played"
    BYE = "bye", "Bye"
    REQUESTED = "requested", "Bye (requested)"
    ABSENT = "absent", "Missed (late entry)"
    FORFEIT = "forfeit", "Won by forfeit"
    POD = "pod", "Free-for-all pod"


class Board(models.Model):
    """One game of a round: entry ``a`` against ``b`` (none: a bye), its ladder match and its result.

    A free-for-all pod is a board of kind ``pod``: ``a`` is its first seat, ``b`` none, its
    entries and places are its ``PodSeat`` rows, and ``result`` is 1 once its places are in.
    """

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="boards")
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="boards")
    number = models.PositiveSmallIntegerField()
    a = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="+")
    b = models.ForeignKey(Entry, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    bracket_key = models.CharField(max_length=12, blank=True)
    match = models.OneToOneField(
        "ladder.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="tournament_board"
    )
    result = models.FloatField(null=True, blank=True, help_text="a's result: 1 a won, 0.5 a draw, 0 b won.")
    kind = models.CharField(max_length=10, choices=BoardKind, default=BoardKind.PLAYED)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decision_reason = models.CharField(max_length=300, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["round__number", "number"]
        constraints = [
            models.UniqueConstraint(fields=["round", "number"], name="board_number_per_round"),
            models.CheckConstraint(condition=~Q(a=F("b")), name="board_two_entries"),
        ]

    def __str__(self) -> str:
        return f"{self.round}, board {self.number}"

    @property
    def is_open(self) -> bool:
        return self.result is None


class PodSeat(models.Model):
    """One entry's seat at a free-for-all pod: the side of the pod's match it plays, and its place."""

    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="seats")
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="+")
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="+")
    index = models.PositiveSmallIntegerField(help_text="The side of the pod's match (0 is the first).")
    place = models.FloatField(
        null=True, blank=True, help_text="1 is best; entries that tied share places (their mean). Empty until known."
    )

    class Meta:
        ordering = ["board", "index"]
        constraints = [
            models.UniqueConstraint(fields=["board", "index"], name="pod_seat_index"),
            models.UniqueConstraint(fields=["board", "entry"], name="pod_seat_entry"),
            models.CheckConstraint(condition=Q(place__isnull=True) | Q(place__gte=1), name="pod_seat_place"),
        ]

    def __str__(self) -> str:
        return f"{self.entry_id} at {self.board_id}, seat {self.index}"


class RequestedBye(models.Model):
    """A bye for a Swiss round not yet paired, asked for by the entry or given by an organiser.

    The round's pairing leaves the entry out and gives it a board of kind ``requested``,
    worth a draw (docs/rules.md §22). One per entry: with the pairing's bye, an entry has at
    most one bye in a tournament (the service refuses a request from an entry that had the
    pairing's bye, and the pairing passes over an entry with a requested bye to come).
    """

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="requested_byes")
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="+")
    round = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])
    given_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField()

    class Meta:
        ordering = ["round", "id"]
        constraints = [
            models.UniqueConstraint(fields=["entry"], name="one_requested_bye_per_entry"),
            models.CheckConstraint(condition=Q(round__gte=1), name="requested_bye_round"),
        ]

    def __str__(self) -> str:
        return f"{self.entry_id}: bye in round {self.round}"


class Action(models.Model):
    """What an organiser did, with the reason: the tournament's record."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="actions")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=20)
    reason = models.CharField(max_length=300)
    entry = models.ForeignKey(Entry, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    board = models.ForeignKey(Board, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.action}: {self.reason}"


class TournamentPointsSettings(models.Model):
    """The constants of a ladder's tournament points across events (docs/rules.md §22).

    ``competition_points`` takes them as arguments; a ladder without a row uses the seed's
    constants (these fields' defaults), so the table needs no row to exist.
    """

    ladder = models.OneToOneField("ladder.Ladder", on_delete=models.CASCADE, related_name="tournament_points_settings")
    base = models.FloatField(
        default=100000.0,
        validators=[MinValueValidator(1), MaxValueValidator(1e9)],
        help_text="The points of a lone winner of an infinite field, before the field and decay factors.",
    )
    rank_power = models.FloatField(
        default=0.75,
        validators=[MinValueValidator(0), MaxValueValidator(5)],
        help_text="The rank factor is rank^(−rank power): 0 gives every place the same, higher favours the top.",
    )
    decay_days = models.FloatField(
        default=500.0,
        validators=[MinValueValidator(1), MaxValueValidator(36500)],
        help_text="Points fall by a factor e every this many days after the tournament finished.",
    )

    class Meta:
        verbose_name = "tournament points settings"
        verbose_name_plural = "tournament points settings"
        constraints = [
            models.CheckConstraint(
                condition=Q(base__gt=0, rank_power__gte=0, decay_days__gt=0), name="tournament_points_constants"
            ),
        ]

    def __str__(self) -> str:
        return f"tournament points settings of {self.ladder}"
