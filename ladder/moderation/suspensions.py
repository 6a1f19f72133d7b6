"""Per-ladder suspensions (docs/rules.md §18): a moderator keeps a player out of one ladder.

While a suspension is in force the player cannot search (``matchmaking`` calls
``refuse_if_suspended`` when they join the queue, and its poll ends a search already
running), cannot report or be named in a new report, and is not listed on the
leaderboard nor counted among its members. Their own page in the ladder still works
and says why. Suspending or lifting changes who is listed, so both bump the ladder's
``updated_at``: every cached ranking, page and panel of the ladder is keyed on it
(``ladder_state``) and is ranked again on the next request.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Subquery

from accounts.models import User
from audit.models import Action
from audit.services import audit_record
from core.moments import moment_text
from ladder.models import Ladder, Suspension
from notifications.models import Kind
from notifications.services import notify

SUSPENDED = "You are suspended from %(ladder)s %(until)s. Reason: %(reason)s"
NAMED_SUSPENDED = "%(player)s is suspended from %(ladder)s and cannot be named in a result until %(until_short)s."
REASON_REQUIRED = "Give the reason: the player reads it."
ENDS_IN_PAST = "The end must be in the future (or empty, until a moderator lifts it)."
ALREADY_LIFTED = "This suspension was already lifted."


def until_words(ends_at: datetime | None) -> str:
    """``ends_at`` in words, as the player reads it: "until 30 Nov 2026, 18:00 UTC"."""
    if ends_at is None:
        return "until a moderator lifts it"
    return "until " + moment_text(ends_at)


def _sentence(reason: str) -> str:
    text = reason.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def suspended_message(suspension: Suspension) -> str:
    """What a suspended player reads on the ladder page and when refused."""
    return SUSPENDED % {
        "ladder": suspension.ladder.name,
        "until": until_words(suspension.ends_at),
        "reason": _sentence(suspension.reason),
    }


def forget_listing(ladder: Ladder, now: datetime) -> None:
    """Make every cached ranking, page and panel of ``ladder`` stale: they are keyed on its
    settings digest (``ladder_state``), of which ``updated_at`` is part."""
    Ladder.objects.filter(pk=ladder.pk).update(updated_at=now)
    ladder.updated_at = now


def suspend(
    *, ladder: Ladder, player: User, reason: str, ends_at: datetime | None, by: User | None, now: datetime
) -> Suspension:
    """Suspend ``player`` from ``ladder`` from ``now`` until ``ends_at`` (``None``: until lifted) and tell them.

    A search already running in the ladder ends at its next poll (``matchmaking`` refuses it).
    """
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": REASON_REQUIRED}, code="reason_required")
    if ends_at is not None and ends_at <= now:
        raise ValidationError({"ends_at": ENDS_IN_PAST}, code="ends_in_past")
    with transaction.atomic():
        suspension = Suspension.objects.create(
            ladder=ladder, player=player, reason=reason, starts_at=now, ends_at=ends_at, created_by=by
        )
        forget_listing(ladder, now)
        notify(
            Kind.SUSPENDED,
            [player.pk],
            key=f"suspension:{suspension.pk}",
            ladder_id=ladder.pk,
            data={
                "ladder": ladder.name,
                "ladder_slug": ladder.slug,
                "reason": reason,
                "ends_at": ends_at.isoformat() if ends_at else None,
            },
            now=now,
        )
        audit_record(
            actor=by,
            action=Action.SUSPEND,
            subject=player,
            ladder=ladder,
            target=f"suspension {suspension.pk}",
            reason=reason,
            data={"ends_at": ends_at.isoformat() if ends_at else None},
            at=now,
        )
    return suspension


def lift(*, suspension: Suspension, by: User | None, now: datetime) -> Suspension:
    """End ``suspension`` now, recording who lifted it: the player is listed again, may search and
    report, and is told so (a moderator's decision) if it was still in force."""
    if suspension.lifted_at is not None:
        raise ValidationError(ALREADY_LIFTED, code="already_lifted")
    in_force = suspension.ends_at is None or suspension.ends_at > now
    with transaction.atomic():
        suspension.lifted_at, suspension.lifted_by = now, by
        suspension.save(update_fields=["lifted_at", "lifted_by"])
        forget_listing(suspension.ladder, now)
        if in_force:  # one that had ended changes nothing for the player: nothing to tell
            ladder = suspension.ladder
            notify(
                Kind.DECISION,
                [suspension.player_id],
                key=f"suspension:{suspension.pk}:lifted",
                ladder_id=ladder.pk,
                data={"action": "lift", "ladder": ladder.name, "ladder_slug": ladder.slug},
                now=now,
            )
        audit_record(
            actor=by,
            action=Action.SUSPENSION_LIFT,
            subject=suspension.player,
            ladder=suspension.ladder,
            target=f"suspension {suspension.pk}",
            data={"suspended_for": suspension.reason},
            at=now,
        )
    return suspension


def active_suspension(*, ladder: Ladder, player: User, now: datetime) -> Suspension | None:
    """The suspension of ``player`` in force in ``ladder`` at ``now`` (the one ending last), or ``None``."""
    if not player.is_authenticated:
        return None
    found = Suspension.objects.in_force(now).filter(ladder=ladder, player=player)
    suspension = found.order_by("-ends_at").first()  # NULL (until lifted) sorts first, descending
    if suspension is not None:
        suspension.ladder = ladder
    return suspension


def in_force_id(*, ladder: Ladder, player: User, now: datetime) -> Subquery:
    """``active_suspension``'s id as a subquery, to read with another row (the ladder page's membership)."""
    found = Suspension.objects.in_force(now).filter(ladder=ladder, player=player).order_by("-ends_at")
    return Subquery(found.values("pk")[:1])


def refuse_if_suspended(*, ladder: Ladder, player: User, now: datetime) -> None:
    """Raise ``ValidationError(code="suspended")`` with the reason and end if ``player`` is suspended."""
    suspension = active_suspension(ladder=ladder, player=player, now=now)
    if suspension is not None:
        raise ValidationError(suspended_message(suspension), code="suspended")


def refuse_suspended_players(*, ladder: Ladder, player_ids: Iterable[int], reporter: User, now: datetime) -> None:
    """Refuse a report by or naming a suspended player: one indexed query.

    The reporter reads their own reason; a report naming someone else says only that
    they are suspended and until when (the reason is theirs to read, not the reporter's).
    """
    ids = {reporter.pk, *player_ids}
    found = Suspension.objects.in_force(now).filter(ladder=ladder, player_id__in=ids).select_related("player")
    suspensions = list(found.order_by("-ends_at"))
    if not suspensions:
        return
    own = next((s for s in suspensions if s.player_id == reporter.pk), None)
    if own is not None:
        own.ladder = ladder
        raise ValidationError(suspended_message(own), code="suspended")
    other = suspensions[0]
    until = until_words(other.ends_at).removeprefix("until ")
    raise ValidationError(
        NAMED_SUSPENDED % {"player": other.player.username, "ladder": ladder.name, "until_short": until},
        code="suspended",
    )
