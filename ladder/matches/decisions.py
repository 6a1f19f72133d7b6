"""A moderator's decisions on a match: confirm it as reported, void it, or correct its result.

Each validates first (nothing changes on refusal), then writes in one transaction with
the match row locked. Voiding or correcting a rated match records the decision at once
and a ``ReplayJob`` that replays the ladder from the match's place in the log in a Celery
worker (``ratings.replay_jobs``), so every later rating follows without the request
waiting for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from audit.models import Action
from audit.services import audit_record
from ladder.matches import states
from ladder.matches.checks import check_placements, locked
from ladder.matches.notes import confirm_note, correction_note, void_note
from ladder.matches.notices import lineup_of, tell_decision
from ladder.matches.reporting import ALREADY_VOID, CANNOT_CONFIRM, REASON_REQUIRED, confirm_and_rate
from ladder.models import Confirmation, Ladder, Match, MatchSide, MatchStatus
from ratings.models import RatingEvent, ReplayJob, ReplayJobKind
from ratings.services import replay_job_request


@dataclass(frozen=True, slots=True)
class Decision:
    """A moderator's decision on a match, and the replay job it queued (None when nothing is re-rated)."""

    match: Match
    job: ReplayJob | None


def match_moderate_confirm(*, match: Match, moderator: User, reason: str, now: datetime | None = None) -> Match:
    """A moderator settles a pending or disputed match as reported, saying why, as every decision does."""
    now = now or timezone.now()
    if not reason.strip():
        raise ValidationError(REASON_REQUIRED, code="reason_required")
    with transaction.atomic():
        match = locked(match)
        if not states.MODERATOR_CONFIRM.allows(match.status):
            raise ValidationError(
                CANNOT_CONFIRM, code="cannot_confirm", params={"status": match.get_status_display().lower()}
            )
        match.moderator_note = _note(match, confirm_note(reason))
        match.save(update_fields=["moderator_note"])
        confirm_and_rate(match, Confirmation.MODERATOR, now, transition=states.MODERATOR_CONFIRM)
        tell_decision(match=match, lineup=lineup_of(match), action="confirm", reason=reason.strip(), now=now)
        _audit(match, moderator, Action.MATCH_CONFIRM, reason, now)
        return match


def match_void(*, match: Match, moderator: User, reason: str, now: datetime | None = None) -> Decision:
    """Void a match; if it was rated, a job replays the ladder from it without it."""
    now = now or timezone.now()
    if not reason.strip():
        raise ValidationError(REASON_REQUIRED, code="reason_required")
    with transaction.atomic():
        match = locked(match)
        if not states.VOID.allows(match.status):
            raise ValidationError(ALREADY_VOID, code="already_void")
        match.moderator_note = _note(match, void_note(moderator.username, reason))
        match.save(update_fields=[*states.void(match, moderator=moderator, now=now), "moderator_note"])
        event = RatingEvent.objects.filter(match=match).first()
        job = None
        if event is not None:
            event.is_active = False
            event.save(update_fields=["is_active"])
            job = replay_job_request(
                ladder=match.ladder,
                kind=ReplayJobKind.VOID,
                match=match,
                from_event_id=event.pk,
                requested_by=moderator,
                reason=reason,
            )
        tell_decision(match=match, lineup=lineup_of(match), action="void", reason=reason.strip(), now=now)
        _audit(match, moderator, Action.MATCH_VOID, reason, now)
        return Decision(match, job)


VOID_OWN = "A moderator cannot void their own games: ask another moderator."
VOID_NOTHING = "%(player)s has no game in %(ladder)s played since then that is not void already."


def matches_void_since(
    *, ladder: Ladder, player: User, since: datetime, moderator: User, reason: str, now: datetime | None = None
) -> list[Decision]:
    """Void every game of ``player`` in ``ladder`` played at or after ``since`` (docs/rules.md §15, "Refunds").

    One transaction, each match voided as ``match_void`` does (its players told, its event
    deactivated); the replay jobs the voids request merge into one from the earliest.
    """
    now = now or timezone.now()
    if not reason.strip():
        raise ValidationError(REASON_REQUIRED, code="reason_required")
    if player.pk == moderator.pk:
        raise ValidationError(VOID_OWN, code="own_games")
    with transaction.atomic():
        games = (
            Match.objects.filter(ladder=ladder, participants__player=player, played_at__gte=since)
            .exclude(status=MatchStatus.VOID)
            .distinct()
            .order_by("played_at", "pk")
        )
        decisions = [match_void(match=match, moderator=moderator, reason=reason, now=now) for match in games]
        if not decisions:
            raise ValidationError(
                VOID_NOTHING, code="nothing_to_void", params={"player": player.username, "ladder": ladder.name}
            )
        return decisions


def match_correct(
    *, match: Match, moderator: User, placements: Sequence[int], reason: str, now: datetime | None = None
) -> Decision:
    """Set the result a moderator decided; for a rated match a job replays the ladder from its place in the log.

    An unrated match is confirmed and rated at once (one match's update, no replay).
    """
    now = now or timezone.now()
    if not reason.strip():
        raise ValidationError(REASON_REQUIRED, code="reason_required")
    with transaction.atomic():
        match = locked(match)
        if match.status == MatchStatus.VOID:
            raise ValidationError(ALREADY_VOID, code="already_void")
        sides = list(match.sides.order_by("index"))
        check_placements(match.ladder, placements, sides=len(sides))
        for side, placement in zip(sides, placements, strict=True):
            side.placement = placement
        MatchSide.objects.bulk_update(sides, ["placement"])
        lineup = lineup_of(match)
        names = [[name for _, name in side] for side in lineup.sides]
        match.moderator_note = _note(match, correction_note(names, lineup.placements, reason))
        match.save(update_fields=["moderator_note"])
        event = RatingEvent.objects.filter(match=match, is_active=True).first()
        job = None
        if event is not None:
            job = replay_job_request(
                ladder=match.ladder,
                kind=ReplayJobKind.CORRECT,
                match=match,
                from_event_id=event.pk,
                requested_by=moderator,
                reason=reason,
            )
        elif match.status != MatchStatus.CONFIRMED:
            confirm_and_rate(match, Confirmation.MODERATOR, now, transition=states.CORRECT_UNRATED)
        tell_decision(match=match, lineup=lineup, action="correct", reason=reason.strip(), now=now)
        _audit(match, moderator, Action.MATCH_CORRECT, reason, now, {"placements": list(placements)})
        return Decision(match, job)


def _audit(
    match: Match, moderator: User, action: Action, reason: str, now: datetime, data: dict[str, Any] | None = None
) -> None:
    """The decision in the audit trail, in its transaction: about the match's players, in its ladder."""
    audit_record(
        actor=moderator,
        action=action,
        ladder=match.ladder,
        target=f"match {match.pk}",
        reason=reason,
        data={"match": match.pk, **(data or {})},
        at=now,
    )


def _note(match: Match, line: str) -> str:
    return f"{match.moderator_note}\n{line}".strip()
