"""A moderator corrects a match's game details after the report: a mistyped map, the wrong tribe.

``match_fields_correct`` takes the values as a report's API sends them (``fields`` and
``player_fields``), checked by ``clean_answers`` with errors naming the field. Only the
fields given change: a value given blank is removed (a required field refuses that), the
others keep what they had. A rated match keeps its ratings; its statistics take the old
values out and the new ones in, in the same transaction (``ratings.hooks``). The decision
is a line of the match's moderator note, with the reason, as a void or a correction is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from accounts.models import User
from accounts.roles import is_moderator
from ladder.fields.answers import Answer, clean_answers, format_duration, ladder_fields
from ladder.matches.checks import locked
from ladder.matches.reporting import REASON_REQUIRED
from ladder.models import FieldKind, Match, MatchField, MatchFieldValue, MatchStatus
from ratings import hooks
from ratings.models import PlayerRating, RatingEvent

REASON_MAX_LENGTH = 500
NOT_A_MODERATOR = "Only moderators may correct a match's game details."
CANCELLED = "This match was cancelled and never played: it has no game details to correct."
REASON_TOO_LONG = "Keep the reason to 500 characters."
NOTHING_CHANGED = "These are the match's game details already: change a value to correct it."
VOID_INSTEAD = (
    "This ladder does not rate games with %(what)s, and this match is rated. "
    "If that is what happened, void the match instead."
)
UNRATED_INSTEAD = "This ladder does not rate games with %(what)s. If that is what happened, void the match instead."

Key = tuple[int, int | None]  # a value's field and player (None: the match's)


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One value the correction changed: ``before`` or ``after`` is None where there was or is none."""

    field: MatchField
    player: User | None
    before: str | None
    after: str | None


def match_fields_correct(
    *, match: Match, moderator: User, answers: Mapping[str, Any], reason: str
) -> list[FieldChange]:
    """Set the game details ``answers`` gives (``{"fields": {...}, "player_fields": {player: {...}}}``).

    Refuses, changing nothing, anyone but a moderator, a cancelled match, a missing or long
    reason, a value its field refuses, and a yes that would make the game unrated.
    """
    if not is_moderator(moderator):
        raise PermissionDenied(NOT_A_MODERATOR)
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": ValidationError(REASON_REQUIRED, code="reason_required")})
    if len(reason) > REASON_MAX_LENGTH:
        raise ValidationError({"reason": ValidationError(REASON_TOO_LONG, code="reason_too_long")})
    with transaction.atomic():
        match = locked(match)
        if match.status == MatchStatus.CANCELLED:
            raise ValidationError(CANCELLED, code="cancelled")
        players = list(User.objects.filter(participations__match=match).order_by("participations__id"))
        fields = ladder_fields(match.ladder)
        match_values = dict(answers.get("fields") or {})
        player_values = {key: dict(values) for key, values in (answers.get("player_fields") or {}).items()}
        given = set(match_values) | {name for values in player_values.values() for name in values}
        touched = [field for field in fields if field.name in given]
        stored = list(MatchFieldValue.objects.filter(match=match, field__in=touched).select_related("player"))
        rated = RatingEvent.objects.filter(match=match, is_active=True).exists()
        if rated:  # as a rating does: a replay of the ladder, which rebuilds the statistics, waits or goes first
            _lock_ratings(match, players)
        cleaned = _clean(match, touched, players, stored, match_values, player_values, rated=rated)
        changes = _changes(touched, players, stored, cleaned)
        if not changes:
            raise ValidationError(NOTHING_CHANGED, code="nothing_changed")
        # Taken out as counted with the old values; never counted (a ladder rated before its statistics
        # were first built): counted again from the history once the new values are written.
        recount = rated and not hooks.matches_unrated(match.ladder_id, [match.pk])
        _write(match, stored, changes)
        if recount:  # the statistics never counted this match as it was: count the ladder again
            hooks.ladder_replayed(match.ladder_id)
        elif rated:
            hooks.matches_rated(match.ladder_id, [match.pk])
        line = correction_note(moderator.username, changes, reason)
        match.moderator_note = f"{match.moderator_note}\n{line}".strip()
        match.save(update_fields=["moderator_note"])
        return changes


def _clean(
    match: Match,
    touched: Sequence[MatchField],
    players: Sequence[User],
    stored: Sequence[MatchFieldValue],
    match_values: dict[str, Any],
    player_values: dict[Any, dict[str, Any]],
    *,
    rated: bool,
) -> list[Answer]:
    """The touched fields' values checked as a report's: the other players' stored values of a
    per-player field given for some players count as given again, so a required one is not refused."""
    merged: dict[object, dict[str, object]] = {}
    for value in stored:
        if value.player is not None:
            merged.setdefault(value.player.username, {})[value.field.name] = value.value
    for key, values in player_values.items():
        merged.setdefault(_username(key, players), {}).update(values)
    try:
        return clean_answers(
            ladder=match.ladder, fields=touched, players=players, match_values=match_values, player_values=merged
        )
    except ValidationError as exc:
        raise _void_instead(exc, rated=rated) from None


def _lock_ratings(match: Match, players: Sequence[User]) -> None:
    rows = PlayerRating.objects.select_for_update().filter(ladder_id=match.ladder_id, player__in=players)
    list(rows.order_by("pk").values_list("pk", flat=True))


def _username(key: object, players: Sequence[User]) -> object:
    """A player key as ``clean_answers`` takes it (username or id), as the player's username when found."""
    for player in players:
        if str(key).lower() in (player.username.lower(), str(player.pk)):
            return player.username
    return key


def _void_instead(exc: ValidationError, *, rated: bool) -> ValidationError:
    """A yes that makes the game unrated tells the moderator to void the match; other errors as they are."""
    if not hasattr(exc, "error_dict"):
        return exc
    errors: dict[str, list[ValidationError]] = {}
    for key, found in exc.error_dict.items():
        errors[key] = [
            ValidationError(VOID_INSTEAD if rated else UNRATED_INSTEAD, code="void_instead", params=error.params)
            if error.code == "unrated_game"
            else error
            for error in found
        ]
    return ValidationError(errors)


def _changes(
    touched: Sequence[MatchField], players: Sequence[User], stored: Sequence[MatchFieldValue], cleaned: Sequence[Answer]
) -> list[FieldChange]:
    """What differs, in the form's order: each field's match value, then each player's."""
    before: dict[Key, str] = {(value.field_id, value.player_id): value.value for value in stored}
    after: dict[Key, str] = {(a.field.pk, a.player.pk if a.player else None): a.value for a in cleaned}
    changes = []
    for field in touched:
        whose: list[User | None] = list(players) if field.per_player else [None]
        for player in whose:
            key = (field.pk, player.pk if player else None)
            if before.get(key) != after.get(key):
                changes.append(FieldChange(field, player, before.get(key), after.get(key)))
    return changes


def _write(match: Match, stored: Sequence[MatchFieldValue], changes: Sequence[FieldChange]) -> None:
    rows = {(value.field_id, value.player_id): value for value in stored}
    gone, new = [], []
    for change in changes:
        row = rows.get((change.field.pk, change.player.pk if change.player else None))
        if row is not None:
            gone.append(row.pk)
        if change.after is not None:
            new.append(MatchFieldValue(match=match, field=change.field, player=change.player, value=change.after))
    MatchFieldValue.objects.filter(pk__in=gone).delete()
    MatchFieldValue.objects.bulk_create(new)


def _shown(field: MatchField, value: str | None) -> str:
    if value is None:
        return "none"
    return format_duration(int(value)) if field.kind == FieldKind.DURATION else value


def correction_note(moderator: str, changes: Sequence[FieldChange], reason: str) -> str:
    """ "Game details corrected by mod: Map Crater → The Nile; Tribe of ash Empire → none. Reason: typo." """
    parts = []
    for change in changes:
        label = f"{change.field.label} of {change.player.username}" if change.player else change.field.label
        parts.append(f"{label} {_shown(change.field, change.before)} → {_shown(change.field, change.after)}")
    reason = reason if reason.endswith((".", "!", "?")) else f"{reason}."
    return f"Game details corrected by {moderator}: {'; '.join(parts)}. Reason: {reason}"
