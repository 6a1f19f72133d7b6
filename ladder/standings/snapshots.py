"""Reads of the nightly leaderboard snapshots: rank changes, movers and rank history.

Each is a fixed, small number of queries on the snapshot tables, whatever the size of
the ladder: no page rebuilds a past ranking from the rating history.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from django.db.models import F, OuterRef, Subquery

from accounts.models import User
from ladder.models import Ladder, LeaderboardSnapshot, SnapshotEntry

MOVERS_DAYS = 7
MOVERS_SHOWN = 5


def _day(value: date) -> str:
    return f"{value.day} {value:%b}"


@dataclass(frozen=True, slots=True)
class RankChange:
    """A ranked player's move since the latest snapshot: up, down, level, or new to it."""

    rank: int
    previous: int | None  # None: not in the snapshot (not ranked then, or below its top N)
    since: date

    @property
    def places(self) -> int:
        return 0 if self.previous is None else self.previous - self.rank

    @property
    def tone(self) -> str:
        if self.previous is None:
            return "new"
        return "up" if self.places > 0 else "down" if self.places < 0 else "same"

    @property
    def label(self) -> str:
        """▲3, ▼1, new, or – for no change."""
        if self.previous is None:
            return "new"
        if self.places > 0:
            return f"▲{self.places}"
        if self.places < 0:
            return f"▼{-self.places}"
        return "–"

    @property
    def title(self) -> str:
        """The change in words, for a tooltip and screen readers."""
        if self.previous is None:
            return f"New: not ranked on {_day(self.since)}"
        if self.places == 0:
            return f"Same rank as on {_day(self.since)}"
        places = abs(self.places)
        way = "Up" if self.places > 0 else "Down"
        return f"{way} {places} place{'s' if places != 1 else ''} since {_day(self.since)} (was #{self.previous})"


def latest_snapshot(ladder: Ladder) -> LeaderboardSnapshot | None:
    """The ladder's latest snapshot (one indexed query)."""
    return LeaderboardSnapshot.objects.filter(ladder=ladder).order_by("-date").first()


def rank_changes(*, ladder: Ladder, ranks: dict[int, int]) -> tuple[LeaderboardSnapshot | None, dict[int, RankChange]]:
    """Each player's change from the latest snapshot to their rank now (``ranks``: player id → rank).

    Two queries. A player missing from the snapshot is "new" when the snapshot held every
    ranked player or the player is now within its top N; otherwise their old rank is
    unknown and they get no entry.
    """
    snapshot = latest_snapshot(ladder)
    if snapshot is None or not ranks:
        return snapshot, {}
    before = dict(
        SnapshotEntry.objects.filter(snapshot=snapshot, player_id__in=list(ranks)).values_list("player_id", "rank")
    )
    changes = {}
    for player_id, rank in ranks.items():
        previous = before.get(player_id)
        if previous is not None or snapshot.is_complete or rank <= snapshot.size:
            changes[player_id] = RankChange(rank=rank, previous=previous, since=snapshot.date)
    return snapshot, changes


@dataclass(frozen=True, slots=True)
class Mover:
    player: User
    rank: int
    previous: int
    value: float

    @property
    def places(self) -> int:
        return self.previous - self.rank


@dataclass(frozen=True, slots=True)
class Movers:
    since: date  # the older snapshot's date
    until: date  # the latest snapshot's date
    climbers: list[Mover]

    @property
    def days(self) -> int:
        return (self.until - self.since).days


def ladder_movers(*, ladder: Ladder, days: int = MOVERS_DAYS, limit: int = MOVERS_SHOWN) -> Movers | None:
    """The biggest climbers up to the ladder's latest snapshot (see ``movers_until``)."""
    latest = latest_snapshot(ladder)
    return None if latest is None else movers_until(latest, days=days, limit=limit)


def movers_until(latest: LeaderboardSnapshot, *, days: int = MOVERS_DAYS, limit: int = MOVERS_SHOWN) -> Movers | None:
    """The biggest climbers from the snapshot ``days`` before ``latest`` to ``latest``.

    Until the ladder has a snapshot that old, the oldest one stands in for it; with fewer
    than two snapshots there is nothing to compare (None). Only players in both count:
    someone new to the top N has no old rank to climb from. Three queries at most.
    """
    snapshots = LeaderboardSnapshot.objects.filter(ladder_id=latest.ladder_id).only("pk", "date")
    older = snapshots.filter(date__lt=latest.date)
    base = (
        older.filter(date__lte=latest.date - timedelta(days=days)).order_by("-date").first()
        or older.order_by("date").first()
    )
    if base is None:
        return None
    old_rank = SnapshotEntry.objects.filter(snapshot=base, player=OuterRef("player")).values("rank")[:1]
    rows = (
        SnapshotEntry.objects.filter(snapshot=latest)
        .annotate(previous=Subquery(old_rank))
        .filter(previous__gt=F("rank"))
        .annotate(places=F("previous") - F("rank"))
        .select_related("player")
        .order_by("-places", "rank")[:limit]
    )
    climbers = [Mover(player=row.player, rank=row.rank, previous=row.previous, value=row.value) for row in rows]
    return Movers(since=base.date, until=latest.date, climbers=climbers)


@dataclass(frozen=True, slots=True)
class RankHistoryPoint:
    date: date
    rank: int
    value: float


def player_rank_history(*, ladder: Ladder, player: User) -> list[RankHistoryPoint]:
    """``player``'s rank in each of ``ladder``'s snapshots that holds them, oldest first (one query)."""
    rows = (
        SnapshotEntry.objects.filter(snapshot__ladder=ladder, player=player)
        .order_by("snapshot__date")
        .values_list("snapshot__date", "rank", "value")
    )
    return [RankHistoryPoint(date=day, rank=rank, value=value) for day, rank, value in rows]
