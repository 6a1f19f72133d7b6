"""The matchmaking queue (docs/rules.md §13)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class EntryStatus(models.TextChoices):
    WAITING = "waiting", "Waiting"
    MATCHED = "matched", "Matched"
    EXPIRED = "expired", "Expired"
    LEFT = "left", "Left"


class QueueEntry(models.Model):
    """One search for an opponent by one player in one ladder.

    ``rating``, ``rd`` and ``rd_as_of`` copy the player's rating when the search starts,
    so the search for opponents is a range query on an index of waiting entries; RDs are
    still inflated to the moment of pairing.

    Each player has at most one *open* entry per ladder (waiting, left or expired: a
    partial unique constraint), and a new search reuses it: joining and leaving in a loop
    rewrites one row instead of adding one per search. A matched entry closes for good
    (it records the pairing and points to its match), so the rows of a player in a ladder
    are one per match plus one. Leaving sets ``rejoin_after``: the cool-down before the
    next search (``services.QUEUE_REJOIN_COOLDOWN``).
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="queue_entries")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="queue_entries")
    status = models.CharField(max_length=8, choices=EntryStatus, default=EntryStatus.WAITING)
    rating = models.FloatField()
    rd = models.FloatField("RD")
    volatility = models.FloatField(default=0.06)
    rd_as_of = models.DateTimeField()
    max_rating_gap = models.PositiveIntegerField(
        null=True, blank=True, help_text="The player's own limit: only opponents within ± this many rating points."
    )
    joined_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    match = models.ForeignKey("ladder.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    opponent = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    win_probability = models.FloatField(null=True, blank=True, help_text="The player's chance against the opponent.")
    rejoin_after = models.DateTimeField(
        null=True, blank=True, help_text="Left on purpose: the player's next search may start from this time."
    )
    formats = models.PositiveIntegerField(
        default=1,
        db_default=1,
        help_text="The formats searched for, as the bits of ladder/formats.py (1 = 1 v 1 alone).",
    )
    party = models.ForeignKey(
        "matchmaking.Party",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="entries",
        help_text="Searching with a party: its members wait together and play on one team.",
    )
    party_size = models.PositiveSmallIntegerField(
        default=1, db_default=1, help_text="How many players the search's party had when it started (1: alone)."
    )
    requeued_after = models.ForeignKey(
        "ladder.Match",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Searching again, waiting time kept, because this paired match was cancelled at its ready check.",
    )

    # Not a column: the players a poll's own attempt found per format (``forming.try_form``),
    # kept on the instance so the panel it renders need not read them back from the cache.
    found_now: dict[str, int] | None = None
    # Not a column: this instance's attempt lost a claim to another process (``SKIP LOCKED``),
    # so its poll must not count it as done (``matchmaking.attempts``).
    contended: bool = False

    class Meta:
        verbose_name_plural = "queue entries"
        constraints = [
            # Also one waiting entry per player and ladder; ``sql.join`` names this predicate.
            models.UniqueConstraint(
                fields=["ladder", "player"], condition=~Q(status="matched"), name="queue_one_open_per_player"
            ),
            models.CheckConstraint(condition=Q(rd__gt=0), name="queue_rd_positive"),
            models.CheckConstraint(
                condition=Q(status="matched", match__isnull=False) | ~Q(status="matched"),
                name="queue_matched_has_match",
            ),
        ]
        indexes = [
            models.Index(fields=["ladder", "rating"], condition=Q(status="waiting"), name="queue_waiting_by_rating"),
            models.Index(fields=["status", "joined_at"], name="queue_status_joined"),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} in {self.ladder_id} ({self.status})"


class Block(models.Model):
    """``blocker`` is never paired with ``blocked`` (in either direction)."""

    blocker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="blocks")
    blocked = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="blocked_by")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["blocker", "blocked"], name="block_once"),
            models.CheckConstraint(condition=~Q(blocker=models.F("blocked")), name="block_not_self"),
        ]

    def __str__(self) -> str:
        return f"{self.blocker_id} blocks {self.blocked_id}"


class QueuePenalty(models.Model):
    """Missed ready checks of one player in one ladder (docs/rules.md §13).

    ``strikes`` counts missed checks in a row, each within the ladder's forget window of
    the one before; the first is a warning, later ones ban searching until ``banned_until``.
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="queue_penalties")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="queue_penalties")
    strikes = models.PositiveSmallIntegerField(default=0)
    last_strike_at = models.DateTimeField()
    banned_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["ladder", "player"], name="queue_penalty_once")]

    def __str__(self) -> str:
        return f"{self.player_id} in {self.ladder_id}: {self.strikes} missed ready checks"


class Party(models.Model):
    """Players of one ladder who search together and always play on one team (docs/rules.md §13).

    The leader invites by username; an invitation is answered within ``PARTY_INVITE_TTL``
    (``matchmaking.parties``). A party ends when its leader leaves it or it is left alone.
    """

    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="parties")
    leader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="parties_led")
    created_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "parties"

    def __str__(self) -> str:
        return f"party {self.pk} of {self.leader_id} in {self.ladder_id}"


class PartyStatus(models.TextChoices):
    INVITED = "invited", "Invited"
    ACCEPTED = "accepted", "In the party"
    DECLINED = "declined", "Declined"
    LEFT = "left", "Left"
    EXPIRED = "expired", "Invitation expired"
    WITHDRAWN = "withdrawn", "Invitation withdrawn"


class PartyMember(models.Model):
    """One player's place in a party: invited, then in it (accepted), or out of it.

    ``ladder`` repeats the party's ladder so that the database itself keeps a player in at
    most one party per ladder (``party_one_per_player``).
    """

    party = models.ForeignKey(Party, on_delete=models.CASCADE, related_name="members")
    ladder = models.ForeignKey("ladder.Ladder", on_delete=models.CASCADE, related_name="+")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="party_places")
    status = models.CharField(max_length=9, choices=PartyStatus)
    invited_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["party", "player"], name="party_member_once"),
            models.UniqueConstraint(
                fields=["ladder", "player"], condition=Q(status="accepted"), name="party_one_per_player"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} in party {self.party_id} ({self.status})"
