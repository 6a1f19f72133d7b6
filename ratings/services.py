"""Applying rating events live: rating a confirmed match, a moderator's adjustment.

Replays are in ``ratings.replay`` and run as jobs through ``ratings.replay_jobs`` (both
re-exported here); live updates and replays share ``ratings.history``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from audit.models import Action
from audit.services import audit_record
from ladder.models import Ladder, Match, MatchStatus
from notifications.models import Kind
from notifications.services import notify
from ratings import hooks, store
from ratings.engines import GameResult
from ratings.history import (
    STANDING_FIELDS,
    ChangeRow,
    Standing,
    adjustment_change,
    apply_adjustment,
    apply_match,
    change_values,
    engine_settings,
    match_changes,
    match_layout,
)
from ratings.models import (
    ADJUSTMENT_MAX_DELTA,
    AdjustmentKind,
    ChangeKind,
    EventKind,
    PlayerRating,
    RatingAdjustment,
    RatingChange,
    RatingEvent,
    ReplayJob,
    ReplayJobKind,
)
from ratings.replay import ReplayDifference, ReplayStats, ladder_replay, ladder_replay_differences
from ratings.replay_jobs import replay_job_enqueue, replay_job_for_match, replay_job_request, replay_job_run

ADJUSTMENT_NEEDS_REASON = "Give a reason for the adjustment; it is kept in the rating history."
ADJUSTMENT_NOT_MEMBER = "%(player)s has no rating in %(ladder)s."
ADJUSTMENT_OWN_RATING = "Nobody adjusts their own rating: ask another moderator."
# Bounds of a moderator's adjustment (issue 12): a rating of 1e308 broke every page that
# ranked the player. A change is at most ADJUSTMENT_MAX_DELTA either way, may not take a
# rating outside [RATING_MIN, RATING_MAX] (it may bring one back towards it), and a new RD
# lies between ADJUSTMENT_MIN_RD and the ladder's RD cap.
RATING_MIN = 0.0
RATING_MAX = 10_000.0
ADJUSTMENT_MIN_RD = 1.0
ADJUSTMENT_BAD_DELTA = "The rating change must be a number from -1,000 to +1,000."
ADJUSTMENT_OUT_OF_RANGE = (
    "This would take the rating from %(old)s to %(new)s; adjustments keep ratings between 0 and 10,000."
)
ADJUSTMENT_BAD_RD = "The new RD must be a number from 1 to this ladder's RD cap, %(rd_max)s."
ADJUSTMENT_WITHDRAWN = "This adjustment is withdrawn already."


def _lock_ratings(ladder: Ladder, players: Iterable[int]) -> dict[int, PlayerRating]:
    """Lock the players' rating rows in primary-key order, so two events never deadlock."""
    rows = PlayerRating.objects.select_for_update().filter(ladder=ladder, player_id__in=set(players)).order_by("pk")
    return {row.player_id: row for row in rows}


def _store(rows: dict[int, PlayerRating], after: dict[int, Standing]) -> None:
    """Write the new standings of locked rating rows (``ratings.store.ratings_store``)."""
    changed = []
    for player, standing in after.items():
        row = rows[player]
        for field in STANDING_FIELDS:
            setattr(row, field, getattr(standing, field))
        changed.append(row)
    store.ratings_store(changed)


def rating_apply_match(*, match: Match, now: datetime | None = None) -> RatingEvent | None:
    """Rate a confirmed match once; a second call (a retry, a race) changes nothing.

    The caller holds the match row locked (``select_for_update``) inside the transaction;
    this locks every participant's rating row, numbers the event, and writes the new
    ratings and their history rows. An unrated match (``Match.rated`` off: an unrated
    tournament's game) is never rated: nothing is written and it returns None.
    """
    now = now or timezone.now()
    if match.rated_at is not None or not match.rated:
        return None
    if match.status != MatchStatus.CONFIRMED:
        raise ValueError(f"match {match.pk} is {match.status}, only confirmed matches are rated")
    layout, placements = match_layout(match)
    rows = _lock_ratings(match.ladder, (player for side in layout for player in side))
    event = rating_apply_locked(match=match, layout=layout, placements=placements, rows=rows)
    match.rated_at = now
    match.save(update_fields=["rated_at"])
    hooks.matches_rated(match.ladder_id, [match.pk])
    return event


@dataclass(frozen=True, slots=True)
class RatedMatch:
    """A match rated from its players' locked standings, not yet written: ``changes`` are its history rows."""

    result: GameResult
    standings: dict[int, Standing]
    after: dict[int, Standing]
    settings: dict[str, object]
    changes: list[ChangeRow]


def rating_compute(
    *,
    ladder: Ladder,
    layout: list[list[int]],
    placements: list[int],
    played_at: datetime,
    standings: dict[int, Standing],
) -> RatedMatch:
    """The ladder's engine applied to the players' ``standings`` (their locked rows) at ``played_at``."""
    missing = {player for side in layout for player in side} - standings.keys()
    if missing:
        raise ValidationError(f"Players {sorted(missing)} have no rating in {ladder.name}.")
    result, after = apply_match(
        engine=ladder.get_engine(), layout=layout, placements=placements, played_at=played_at, standings=standings
    )
    changes = match_changes(layout, result, standings, after)
    return RatedMatch(result, standings, after, engine_settings(ladder), changes)


def rating_apply_locked(
    *, match: Match, layout: list[list[int]], placements: list[int], rows: dict[int, PlayerRating]
) -> RatingEvent:
    """Rate ``match`` whose players' rating ``rows`` the caller has locked (pk order).

    For a report confirmed at once, which already locked the rows to validate it and
    knows the layout it just wrote; everyone else calls ``rating_apply_match``.
    """
    ladder = match.ladder
    standings = {player: Standing.of(row) for player, row in rows.items()}
    rated = rating_compute(
        ladder=ladder, layout=layout, placements=placements, played_at=match.played_at, standings=standings
    )
    event = RatingEvent.objects.create(ladder=ladder, kind=EventKind.MATCH, match=match, at=match.played_at)
    engine = str(rated.settings["engine"])
    RatingChange.objects.bulk_create(
        RatingChange(
            event=event,
            ladder_id=event.ladder_id,
            match_id=event.match_id,
            kind=ChangeKind.MATCH,
            engine=engine,
            engine_params=rated.settings,
            **change_values(row),
        )
        for row in rated.changes
    )
    _store(rows, rated.after)
    return event


def rating_adjust(
    *,
    ladder: Ladder,
    player_id: int,
    rating_delta: float,
    new_rd: float | None,
    reason: str,
    moderator_id: int | None,
    now: datetime | None = None,
    kind: str = AdjustmentKind.MANUAL,
    refund_for_id: int | None = None,
) -> RatingAdjustment:
    """A change outside a match, stored as an adjustment, an event and a history row.

    Moderators' manual changes, (``kind="refund"``) refunds of points lost to a booster or
    cheater (``refund_for_id``), and (``kind="queue_timeout"``) the queue's clock reset.
    """
    now = now or timezone.now()
    if not reason.strip():
        raise ValidationError(ADJUSTMENT_NEEDS_REASON, code="reason_required")
    if kind == AdjustmentKind.MANUAL and moderator_id is not None and moderator_id == player_id:
        raise ValidationError({"player": [ValidationError(ADJUSTMENT_OWN_RATING, code="own_rating")]})
    adjustment_check(ladder=ladder, rating=None, rating_delta=rating_delta, new_rd=new_rd)
    with transaction.atomic():
        rows = _lock_ratings(ladder, [player_id])
        if player_id not in rows:
            raise ValidationError(
                ADJUSTMENT_NOT_MEMBER, code="not_member", params={"player": player_id, "ladder": ladder.name}
            )
        adjustment_check(ladder=ladder, rating=rows[player_id].rating, rating_delta=rating_delta, new_rd=new_rd)
        adjustment = RatingAdjustment.objects.create(
            kind=kind,
            ladder=ladder,
            player_id=player_id,
            rating_delta=rating_delta,
            new_rd=new_rd,
            reason=reason.strip(),
            created_by_id=moderator_id,
            created_at=now,
            refund_for_id=refund_for_id,
        )
        event = RatingEvent.objects.create(ladder=ladder, kind=EventKind.ADJUSTMENT, adjustment=adjustment, at=now)
        old = Standing.of(rows[player_id])
        new = apply_adjustment(adjustment, old, ladder.get_engine())
        rd_now = ladder.get_engine().rd_at(old.state(), now.timestamp())
        RatingChange(
            event=event,
            ladder_id=event.ladder_id,
            kind=ChangeKind.ADJUSTMENT,
            engine=ladder.engine,
            engine_params={"reason": adjustment.reason},
            **change_values(adjustment_change(player_id, old, new, rd_now)),
        ).save()
        _store(rows, {player_id: new})
        if kind in (AdjustmentKind.MANUAL, AdjustmentKind.REFUND):
            _tell_adjusted(adjustment, "adjust", adjustment.reason, new.rating - old.rating, now)
            audit_record(
                actor=moderator_id,
                action=Action.REFUND if kind == AdjustmentKind.REFUND else Action.RATING_ADJUST,
                subject=player_id,
                ladder=ladder,
                target=f"adjustment {adjustment.pk}",
                reason=adjustment.reason,
                data={"rating_delta": rating_delta, "new_rd": new_rd, "refund_for": refund_for_id},
                at=now,
            )
    return adjustment


def _tell_adjusted(adjustment: RatingAdjustment, action: str, reason: str, delta: float | None, now: datetime) -> None:
    """Tell the player a moderator adjusted their rating (or withdrew an adjustment), and why."""
    ladder = adjustment.ladder
    notify(
        Kind.DECISION,
        [adjustment.player_id],
        key=f"adjustment:{adjustment.pk}:{action}",
        ladder_id=ladder.pk,
        data={
            "ladder": ladder.name,
            "ladder_slug": ladder.slug,
            "action": action,
            "reason": reason,
            **({"delta": round(delta, 2)} if delta is not None else {}),
        },
        now=now,
    )


def adjustment_check(*, ladder: Ladder, rating: float | None, rating_delta: float, new_rd: float | None) -> None:
    """Refuse an adjustment out of bounds, naming each field: ``ValidationError({field: [...]})``.

    ``rating`` is the player's current rating (None skips the check of the result). The
    admin form calls this for its messages; ``rating_adjust`` calls it again on the locked row.
    """
    errors: dict[str, list[ValidationError]] = {}
    if not (isinstance(rating_delta, int | float) and -ADJUSTMENT_MAX_DELTA <= rating_delta <= ADJUSTMENT_MAX_DELTA):
        errors["rating_delta"] = [ValidationError(ADJUSTMENT_BAD_DELTA, code="bad_delta")]
    elif rating is not None and math.isfinite(rating):
        new = rating + rating_delta
        if (rating_delta > 0 and new > RATING_MAX) or (rating_delta < 0 and new < RATING_MIN):
            errors["rating_delta"] = [
                ValidationError(
                    ADJUSTMENT_OUT_OF_RANGE,
                    code="rating_out_of_range",
                    params={"old": _number(rating), "new": _number(new)},
                )
            ]
    if new_rd is not None and not (isinstance(new_rd, int | float) and ADJUSTMENT_MIN_RD <= new_rd <= ladder.rd_max):
        errors["new_rd"] = [ValidationError(ADJUSTMENT_BAD_RD, code="bad_rd", params={"rd_max": f"{ladder.rd_max:g}"})]
    if errors:
        raise ValidationError(errors)


def adjustment_withdraw(*, adjustment: RatingAdjustment, moderator: User, reason: str) -> ReplayJob:
    """Take an adjustment out of the rating log; a replay job re-rates the ladder from it without it.

    The adjustment and its history stay on record (the rows move to the superseded
    history); replays skip its event from now on. This undoes a mistaken adjustment, also
    one stored before adjustments were bounded.
    """
    if not reason.strip():
        raise ValidationError(ADJUSTMENT_NEEDS_REASON, code="reason_required")
    with transaction.atomic():
        event = RatingEvent.objects.select_for_update().get(adjustment=adjustment)
        if not event.is_active:
            raise ValidationError(ADJUSTMENT_WITHDRAWN, code="already_withdrawn")
        event.is_active = False
        event.save(update_fields=["is_active"])
        if adjustment.kind in (AdjustmentKind.MANUAL, AdjustmentKind.REFUND):
            _tell_adjusted(adjustment, "withdraw", reason.strip(), None, timezone.now())
        audit_record(
            actor=moderator,
            action=Action.ADJUSTMENT_WITHDRAW,
            subject=adjustment.player_id,
            ladder=adjustment.ladder,
            target=f"adjustment {adjustment.pk}",
            reason=reason,
            data={"rating_delta": adjustment.rating_delta, "kind": adjustment.kind},
        )
        return replay_job_request(
            ladder=adjustment.ladder,
            kind=ReplayJobKind.WITHDRAW,
            from_event_id=event.pk,
            requested_by=moderator,
            reason=reason,
        )


def _number(value: float) -> str:
    return f"{value:,.1f}" if abs(value) < 1e9 else f"{value:.3g}"


QUEUE_TIMEOUT_REASON = "Searched for a match until the queue timed out: the RD clock restarts."


def rating_reset_clock(*, ladder: Ladder, player_id: int, now: datetime | None = None) -> RatingAdjustment:
    """The queue rule: trying to play counts as activity; ``rd_as_of`` moves to now, RD unchanged."""
    return rating_adjust(
        ladder=ladder,
        player_id=player_id,
        rating_delta=0.0,
        new_rd=None,
        reason=QUEUE_TIMEOUT_REASON,
        moderator_id=None,
        now=now,
        kind=AdjustmentKind.QUEUE_TIMEOUT,
    )


__all__ = [
    "RatedMatch",
    "ReplayDifference",
    "ReplayStats",
    "adjustment_check",
    "adjustment_withdraw",
    "engine_settings",
    "ladder_replay",
    "ladder_replay_differences",
    "rating_adjust",
    "rating_apply_locked",
    "rating_apply_match",
    "rating_compute",
    "rating_reset_clock",
    "replay_job_enqueue",
    "replay_job_for_match",
    "replay_job_request",
    "replay_job_run",
]
