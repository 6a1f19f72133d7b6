"""Marks (docs/rules.md §15, "Marks"): a moderator's silent, site-wide mark on an account.

A marked account (a booster, a sandbagger, another account of a player) is left out of every
leaderboard and snapshot, its results against unmarked players are held for a moderator
(``marked_hold``, called by the watch), the queue pairs it only with other marked accounts
(``matchmaking``), and it enters no tournament (``tournaments.services``). The player is not
told: like Lichess's marks, it is the moderators' record. Marking or lifting changes who is
listed in every ladder the account belongs to, so both bump those ladders' ``updated_at`` (the
key of every cached ranking).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from accounts.roles import is_moderator
from audit.models import Action
from audit.services import audit_record
from ladder.models import Ladder, MarkKind, Match, PlayerMark
from ladder.moderation.fair_play import Hold

NOT_A_MODERATOR = "Only moderators mark accounts."
NOTE_REQUIRED = "Say why, for the other moderators."
LIFT_NOTE_REQUIRED = "Say why the mark is lifted, for the other moderators."
ALREADY_MARKED = "%(player)s is already marked (%(kind)s). Lift that mark first."
ALREADY_LIFTED = "This mark was already lifted."
OTHER_ACCOUNT_ONLY_FOR_ALTS = "Name another account only for a mark as another account of a player."
OTHER_ACCOUNT_IS_SELF = "The other account must be a different account."
UNKNOWN_KIND = "Choose booster, sandbagger or another account of a player."
HOLD_MARKED = "%(player)s, marked as %(kind)s, played unmarked opponents in this result: a moderator confirms it"
MARKED_HOLD_CODE = "marked_account"


def _forget_listings(player: User, now: datetime) -> None:
    """Make every cached ranking of the ladders ``player`` belongs to stale (``ladder_state``)."""
    Ladder.objects.filter(ratings__player=player).update(updated_at=now)


def _require_moderator(by: User) -> None:
    if not is_moderator(by):
        raise ValidationError(NOT_A_MODERATOR)


def mark_in_force(*, player: User) -> PlayerMark | None:
    """The mark in force on ``player``, or ``None``."""
    return PlayerMark.objects.in_force().filter(player=player).first()


def mark_player(
    *, player: User, kind: str, note: str, by: User, now: datetime, other_account: User | None = None
) -> PlayerMark:
    """Mark ``player`` as ``kind`` from ``now``, silently; at most one mark is in force per player."""
    _require_moderator(by)
    note = (note or "").strip()
    errors: dict[str, str] = {}
    if kind not in MarkKind.values:
        errors["kind"] = UNKNOWN_KIND
    if not note:
        errors["note"] = NOTE_REQUIRED
    if other_account is not None:
        if kind != MarkKind.OTHER_ACCOUNT:
            errors["other_account"] = OTHER_ACCOUNT_ONLY_FOR_ALTS
        elif other_account.pk == player.pk:
            errors["other_account"] = OTHER_ACCOUNT_IS_SELF
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=player.pk).first()  # one marker at a time per player
        current = mark_in_force(player=player)
        if current is not None:
            raise ValidationError(_already(current), code="duplicate")
        mark = PlayerMark.objects.create(
            player=player, kind=kind, other_account=other_account, note=note, created_by=by, created_at=now
        )
        _forget_listings(player, now)
        audit_record(
            actor=by,
            action=Action.MARK,
            subject=player,
            target=f"mark {mark.pk}",
            reason=note,
            data={"kind": kind, "other_account": other_account.username if other_account else None},
            at=now,
        )
    return mark


def _already(current: PlayerMark) -> str:
    return ALREADY_MARKED % {"player": current.player.username, "kind": current.get_kind_display().lower()}


def mark_lift(*, mark: PlayerMark, note: str, by: User, now: datetime) -> PlayerMark:
    """Lift ``mark`` now with the moderator's ``note``: the account is listed and paired as before."""
    _require_moderator(by)
    note = (note or "").strip()
    if not note:
        raise ValidationError({"lift_note": LIFT_NOTE_REQUIRED}, code="reason_required")
    with transaction.atomic():
        lifted = PlayerMark.objects.filter(pk=mark.pk, lifted_at__isnull=True).update(
            lifted_at=now, lifted_by=by, lift_note=note
        )
        if not lifted:
            raise ValidationError(ALREADY_LIFTED, code="already_lifted")
        mark.lifted_at, mark.lifted_by, mark.lift_note = now, by, note
        _forget_listings(mark.player, now)
        audit_record(
            actor=by,
            action=Action.MARK_LIFT,
            subject=mark.player,
            target=f"mark {mark.pk}",
            reason=note,
            data={"kind": mark.kind},
            at=now,
        )
    return mark


def marks_select(*, players: str) -> str:
    """A statement (portable, no ORDER BY) reading the marks in force of the players ``players``
    (SQL: a list of placeholders or a subquery) as rows ``(player_id, kind, "")``: other statements
    embed it, so a result among unmarked players costs no statement of its own."""
    table = PlayerMark._meta.db_table
    return f"SELECT player_id, kind, '' FROM {table} WHERE player_id IN ({players}) AND lifted_at IS NULL"


def marked_hold(*, match: Match, sides: Sequence[tuple[Sequence[int], int]], marked: dict[int, str]) -> Hold | None:
    """Hold a rated result in which a marked account has an unmarked opponent (a player of another side).

    ``sides`` are the players' ids and placement of each side, as the watch reads them, and
    ``marked`` the kind of each of them marked (``marks_select``'s rows). The reasons name
    the marked accounts, for the moderators; the API leaves the code (``marked_account``) out.
    A result among marked accounts only is not held.
    """
    if not match.rated or len(sides) < 2 or not marked:
        return None
    against_unmarked = [
        player
        for index, (ids, _) in enumerate(sides)
        for player in ids
        if player in marked
        and any(other not in marked for j, (others, _) in enumerate(sides) if j != index for other in others)
    ]
    if not against_unmarked:
        return None
    names = dict(User.objects.filter(pk__in=against_unmarked).values_list("pk", "username"))
    reasons = [
        HOLD_MARKED % {"player": names[player], "kind": MarkKind(marked[player]).label.lower()}
        for player in against_unmarked
    ]
    evidence = {
        "reasons": reasons,
        "codes": [MARKED_HOLD_CODE],
        "marked_accounts": [{"player": names[player], "kind": marked[player]} for player in against_unmarked],
    }
    return Hold(reasons=reasons, evidence={"watch": evidence})
