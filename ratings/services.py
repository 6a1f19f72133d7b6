"""Applying rating events (rated matches, adjustments) and replaying a ladder's log.

Live updates and replays share ``_apply_match`` and ``_apply_adjustment``: a replay is the
same arithmetic on the same inputs in the same order (the ``RatingEvent`` ids), which is
why replaying the whole history reproduces the live ratings exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ladder.models import Ladder, Match, MatchStatus
from ratings.engines import Engine, GameResult, RatingState
from ratings.models import ChangeKind, EventKind, PlayerRating, RatingAdjustment, RatingChange, RatingEvent

ADJUSTMENT_NEEDS_REASON = "Give a reason for the adjustment; it is kept in the rating history."
ADJUSTMENT_NOT_MEMBER = "%(player)s has no rating in %(ladder)s."
ADJUSTMENT_BAD_RD = "The new RD must be above 0."


@dataclass(slots=True)
class _Standing:
    """A player's running state during an update or a replay."""

    rating: float
    rd: float
    volatility: float
    rd_as_of: datetime
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    last_played_at: datetime | None = None

    def state(self) -> RatingState:
        return RatingState(self.rating, self.rd, self.volatility, self.rd_as_of.timestamp())

    @classmethod
    def of(cls, row: PlayerRating) -> _Standing:
        return cls(
            row.rating,
            row.rd,
            row.volatility,
            row.rd_as_of,
            row.games,
            row.wins,
            row.losses,
            row.draws,
            row.last_played_at,
        )


def engine_settings(ladder: Ladder) -> dict[str, object]:
    """What the history records about the engine that produced a change."""
    return {"engine": ladder.engine, **dataclasses.asdict(ladder.engine_params())}


def _match_layout(match: Match) -> tuple[list[list[int]], list[int]]:
    """Player ids per side (sides by index, members by participant id) and placements."""
    sides = sorted(match.sides.all(), key=lambda side: side.index)
    members: dict[int, list[tuple[int, int]]] = {side.pk: [] for side in sides}
    for participant in match.participants.all():
        members[participant.side_id].append((participant.pk, participant.player_id))
    layout = [[player for _, player in sorted(members[side.pk])] for side in sides]
    return layout, [side.placement for side in sides]


def _apply_match(
    *,
    engine: Engine,
    layout: Sequence[Sequence[int]],
    placements: Sequence[int],
    played_at: datetime,
    standings: dict[int, _Standing],
) -> tuple[GameResult, dict[int, _Standing]]:
    """Rate one match from ``standings`` and return the engine's result and the new standings.

    The new ``rd_as_of`` is the game's instant, or the player's own if that is later (a
    result confirmed after a later game); the engine never grows an RD backwards.
    """
    before = [[standings[player].state() for player in side] for side in layout]
    result = engine.rate(before, placements, played_at.timestamp())
    after: dict[int, _Standing] = {}
    for side_players, side_results in zip(layout, result.sides, strict=True):
        for player, outcome in zip(side_players, side_results, strict=True):
            old = standings[player]
            new = _Standing(
                outcome.rating,
                outcome.rd,
                outcome.volatility,
                max(old.rd_as_of, played_at),
                old.games + 1,
                old.wins + (outcome.score > 0.5),
                old.losses + (outcome.score < 0.5),
                old.draws + (outcome.score == 0.5),
                played_at if old.last_played_at is None else max(old.last_played_at, played_at),
            )
            after[player] = new
    return result, after


def _change_rows(
    *,
    event: RatingEvent,
    kind: str,
    layout: Sequence[Sequence[int]],
    result: GameResult,
    standings: dict[int, _Standing],
    after: dict[int, _Standing],
    settings: dict[str, object],
) -> list[RatingChange]:
    rows = []
    for side_players, side_results in zip(layout, result.sides, strict=True):
        for player, outcome in zip(side_players, side_results, strict=True):
            old = standings[player]
            new = after[player]
            rows.append(
                RatingChange(
                    event=event,
                    ladder_id=event.ladder_id,
                    player_id=player,
                    match_id=event.match_id,
                    kind=kind,
                    rating_before=old.rating,
                    rd_before=old.rd,
                    volatility_before=old.volatility,
                    rd_as_of_before=old.rd_as_of,
                    rd_at_event=outcome.rd_at_game,
                    rating_after=new.rating,
                    rd_after=new.rd,
                    volatility_after=new.volatility,
                    rd_as_of_after=new.rd_as_of,
                    expected=outcome.expected,
                    score=outcome.score,
                    delta=outcome.delta,
                    engine=str(settings["engine"]),
                    engine_params=settings,
                )
            )
    return rows


def _apply_adjustment(adjustment: RatingAdjustment, old: _Standing) -> _Standing:
    return dataclasses.replace(
        old,
        rating=old.rating + adjustment.rating_delta,
        rd=old.rd if adjustment.new_rd is None else adjustment.new_rd,
    )


def _adjustment_row(
    *, event: RatingEvent, kind: str, adjustment: RatingAdjustment, old: _Standing, new: _Standing, rd_now: float
) -> RatingChange:
    return RatingChange(
        event=event,
        ladder_id=event.ladder_id,
        player_id=adjustment.player_id,
        kind=kind,
        rating_before=old.rating,
        rd_before=old.rd,
        volatility_before=old.volatility,
        rd_as_of_before=old.rd_as_of,
        rd_at_event=rd_now,
        rating_after=new.rating,
        rd_after=new.rd,
        volatility_after=new.volatility,
        rd_as_of_after=new.rd_as_of,
        delta=new.rating - old.rating,
        engine=event.ladder.engine,
        engine_params={"reason": adjustment.reason},
    )


def _lock_ratings(ladder: Ladder, players: Iterable[int]) -> dict[int, PlayerRating]:
    """Lock the players' rating rows in primary-key order, so two events never deadlock."""
    rows = PlayerRating.objects.select_for_update().filter(ladder=ladder, player_id__in=set(players)).order_by("pk")
    return {row.player_id: row for row in rows}


RATING_FIELDS = ["rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at"]


def _store(rows: dict[int, PlayerRating], after: dict[int, _Standing]) -> None:
    changed = []
    for player, standing in after.items():
        row = rows[player]
        for field in RATING_FIELDS:
            setattr(row, field, getattr(standing, field))
        changed.append(row)
    PlayerRating.objects.bulk_update(changed, RATING_FIELDS)


def rating_apply_match(*, match: Match, now: datetime | None = None) -> RatingEvent | None:
    """Rate a confirmed match once; a second call (a retry, a race) changes nothing.

    The caller holds the match row locked (``select_for_update``) inside the transaction;
    this locks every participant's rating row, numbers the event, and writes the new
    ratings and their history rows.
    """
    now = now or timezone.now()
    if match.rated_at is not None:
        return None
    if match.status != MatchStatus.CONFIRMED:
        raise ValueError(f"match {match.pk} is {match.status}, only confirmed matches are rated")
    ladder = match.ladder
    layout, placements = _match_layout(match)
    rows = _lock_ratings(ladder, (player for side in layout for player in side))
    missing = {player for side in layout for player in side} - rows.keys()
    if missing:
        raise ValidationError(f"Players {sorted(missing)} have no rating in {ladder.name}.")
    standings = {player: _Standing.of(row) for player, row in rows.items()}
    event = RatingEvent.objects.create(ladder=ladder, kind=EventKind.MATCH, match=match, at=match.played_at)
    result, after = _apply_match(
        engine=ladder.get_engine(), layout=layout, placements=placements, played_at=match.played_at, standings=standings
    )
    RatingChange.objects.bulk_create(
        _change_rows(
            event=event,
            kind=ChangeKind.MATCH,
            layout=layout,
            result=result,
            standings=standings,
            after=after,
            settings=engine_settings(ladder),
        )
    )
    _store(rows, after)
    match.rated_at = now
    match.save(update_fields=["rated_at"])
    return event


def rating_adjust(
    *,
    ladder: Ladder,
    player_id: int,
    rating_delta: float,
    new_rd: float | None,
    reason: str,
    moderator_id: int,
    now: datetime | None = None,
) -> RatingAdjustment:
    """A moderator's manual change, stored as an adjustment and a history row."""
    now = now or timezone.now()
    if not reason.strip():
        raise ValidationError(ADJUSTMENT_NEEDS_REASON, code="reason_required")
    if new_rd is not None and not new_rd > 0:
        raise ValidationError(ADJUSTMENT_BAD_RD, code="bad_rd")
    with transaction.atomic():
        rows = _lock_ratings(ladder, [player_id])
        if player_id not in rows:
            raise ValidationError(
                ADJUSTMENT_NOT_MEMBER, code="not_member", params={"player": player_id, "ladder": ladder.name}
            )
        adjustment = RatingAdjustment.objects.create(
            ladder=ladder,
            player_id=player_id,
            rating_delta=rating_delta,
            new_rd=new_rd,
            reason=reason.strip(),
            created_by_id=moderator_id,
            created_at=now,
        )
        event = RatingEvent.objects.create(ladder=ladder, kind=EventKind.ADJUSTMENT, adjustment=adjustment, at=now)
        old = _Standing.of(rows[player_id])
        new = _apply_adjustment(adjustment, old)
        rd_now = ladder.get_engine().rd_at(old.state(), now.timestamp())
        _adjustment_row(
            event=event, kind=ChangeKind.ADJUSTMENT, adjustment=adjustment, old=old, new=new, rd_now=rd_now
        ).save()
        _store(rows, {player_id: new})
    return adjustment


@dataclass(frozen=True, slots=True)
class ReplayStats:
    events: int
    matches: int
    adjustments: int
    players: int
    changes: int


def _initial(ladder: Ladder, row: PlayerRating) -> _Standing:
    return _Standing(ladder.initial_rating, ladder.initial_rd, ladder.initial_volatility, row.joined_at)


def ladder_replay(
    *,
    ladder: Ladder,
    from_event_id: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ReplayStats:
    """Recompute every rating event of ``ladder`` from ``from_event_id`` on (all, by default).

    Every rating row of the ladder is locked first, so no live update interleaves; the
    events are then read and applied in id order from the standings just before the first
    one. Old history rows of those events are marked not current and new ``replay`` rows
    written; the final standings go to ``PlayerRating`` in one bulk update.
    """
    with transaction.atomic():
        rows = {
            row.player_id: row for row in PlayerRating.objects.select_for_update().filter(ladder=ladder).order_by("pk")
        }
        events = RatingEvent.objects.filter(ladder=ladder).order_by("pk")
        if from_event_id is not None:
            events = events.filter(pk__gte=from_event_id)
        events = list(events.select_related("adjustment", "match"))
        first = events[0].pk if events else None
        standings = _standings_before(ladder, rows, first, full=from_event_id is None)
        engine = ladder.get_engine()
        settings = engine_settings(ladder)
        match_ids = [event.match_id for event in events if event.match_id and event.is_active]
        layouts = _layouts(match_ids)
        new_rows: list[RatingChange] = []
        touched: set[int] = set()
        counts = {"matches": 0, "adjustments": 0}
        for index, event in enumerate(events, start=1):
            if not event.is_active:
                continue
            if event.kind == EventKind.MATCH:
                layout, placements = layouts[event.match_id]
                result, after = _apply_match(
                    engine=engine,
                    layout=layout,
                    placements=placements,
                    played_at=event.match.played_at,
                    standings=standings,
                )
                new_rows.extend(
                    _change_rows(
                        event=event,
                        kind=ChangeKind.REPLAY,
                        layout=layout,
                        result=result,
                        standings=standings,
                        after=after,
                        settings=settings,
                    )
                )
                standings.update(after)
                touched.update(after)
                counts["matches"] += 1
            else:
                adjustment = event.adjustment
                old = standings[adjustment.player_id]
                new = _apply_adjustment(adjustment, old)
                event.ladder = ladder
                new_rows.append(
                    _adjustment_row(
                        event=event,
                        kind=ChangeKind.REPLAY,
                        adjustment=adjustment,
                        old=old,
                        new=new,
                        rd_now=engine.rd_at(old.state(), event.at.timestamp()),
                    )
                )
                standings[adjustment.player_id] = new
                touched.add(adjustment.player_id)
                counts["adjustments"] += 1
            if progress is not None and (index % 1000 == 0 or index == len(events)):
                progress(index, len(events))
        if first is not None:
            superseded = RatingChange.objects.filter(ladder=ladder, event_id__gte=first, is_current=True)
            touched.update(superseded.values_list("player_id", flat=True).distinct())
            superseded.update(is_current=False)
        RatingChange.objects.bulk_create(new_rows, batch_size=5000)
        if from_event_id is None:
            touched = set(rows)
        _store(rows, {player: standings[player] for player in touched})
        return ReplayStats(
            events=len(events),
            matches=counts["matches"],
            adjustments=counts["adjustments"],
            players=len(touched),
            changes=len(new_rows),
        )


def _layouts(match_ids: list[int]) -> dict[int, tuple[list[list[int]], list[int]]]:
    layouts = {}
    for start in range(0, len(match_ids), 2000):
        chunk = Match.objects.filter(pk__in=match_ids[start : start + 2000]).prefetch_related("sides", "participants")
        for match in chunk:
            layouts[match.pk] = _match_layout(match)
    return layouts


def _standings_before(
    ladder: Ladder, rows: dict[int, PlayerRating], first_event_id: int | None, *, full: bool
) -> dict[int, _Standing]:
    """Each player's standing just before ``first_event_id``: from the history, or the start."""
    standings = {player: _initial(ladder, row) for player, row in rows.items()}
    if full or first_event_id is None:
        return standings
    earlier = (
        RatingChange.objects.current()
        .filter(ladder=ladder, event_id__lt=first_event_id)
        .order_by("player_id", "-event_id")
        .distinct("player_id")
        if _supports_distinct_on()
        else None
    )
    if earlier is not None:
        latest = list(earlier)
    else:
        latest_by_player: dict[int, RatingChange] = {}
        for change in (
            RatingChange.objects.current().filter(ladder=ladder, event_id__lt=first_event_id).order_by("event_id")
        ):
            latest_by_player[change.player_id] = change
        latest = list(latest_by_player.values())
    counters = _counters_before(ladder, first_event_id)
    for change in latest:
        standing = standings[change.player_id]
        standing.rating = change.rating_after
        standing.rd = change.rd_after
        standing.volatility = change.volatility_after
        standing.rd_as_of = change.rd_as_of_after
    for player, (games, wins, losses, draws, last) in counters.items():
        standing = standings[player]
        standing.games, standing.wins, standing.losses, standing.draws = games, wins, losses, draws
        standing.last_played_at = last
    return standings


def _counters_before(ladder: Ladder, first_event_id: int) -> dict[int, tuple[int, int, int, int, datetime | None]]:
    from django.db.models import Count, Max, Q

    rows = (
        RatingChange.objects.current()
        .filter(ladder=ladder, event_id__lt=first_event_id, match__isnull=False)
        .values("player_id")
        .annotate(
            games=Count("id"),
            wins=Count("id", filter=Q(score__gt=0.5)),
            losses=Count("id", filter=Q(score__lt=0.5)),
            draws=Count("id", filter=Q(score=0.5)),
            last=Max("match__played_at"),
        )
    )
    return {row["player_id"]: (row["games"], row["wins"], row["losses"], row["draws"], row["last"]) for row in rows}


def _supports_distinct_on() -> bool:
    from django.db import connection

    return connection.features.can_distinct_on_fields
