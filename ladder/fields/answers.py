"""Checking a report's match fields and writing them (docs/match-fields.md).

``clean_answers`` turns what a form or a bot sent into canonical text, one ``Answer`` per
value, or raises one ``ValidationError`` whose keys name the field: ``fields.<name>`` for a
field of the match, ``player_fields.<username>.<name>`` for a field of one player. The report
services call ``write_answers`` in their own transaction, before the match is rated.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from accounts.models import User
from ladder.models import FieldKind, FieldScope, Ladder, Match, MatchField, MatchFieldValue
from ladder.models.fields import TEXT_MAX_LENGTH, URL_MAX_LENGTH

DURATION_MAX = 7 * 24 * 3600
YES = {"yes", "true", "y", "1", "on"}
NO = {"no", "false", "n", "0", "off"}

REQUIRED = "%(label)s is required."
UNKNOWN_FIELD = "%(ladder)s has no match field “%(name)s”."
NOT_PER_PLAYER = "%(label)s is given once per match, not per player."
NOT_PER_MATCH = "%(label)s is given per player, under player_fields."
UNKNOWN_PLAYER = "%(player)s is not a player of this match."
BAD_CHOICE = "%(label)s must be one of: %(choices)s."
TEXT_TOO_LONG = "%(label)s has at most 200 characters."
CONTROL_CHARACTERS = "%(label)s cannot contain control characters such as line breaks or tabs."
BAD_DURATION = "%(label)s is a duration such as 1:23:45, 83:20, 1h 5m, 45m or a number of seconds."
DURATION_RANGE = "%(label)s is between 1 second and 7 days."
BAD_YES_NO = "%(label)s is yes or no."
BAD_URL = "%(label)s is a link starting with http:// or https://, of at most 500 characters."
NOT_TEXT = "%(label)s is text."
UNRATED = "This ladder does not rate games with %(what)s."

_UNITS = re.compile(r"(\d+)\s*([dhms])", re.IGNORECASE)
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_URL = URLValidator(schemes=["http", "https"])


@dataclass(frozen=True, slots=True)
class Answer:
    """One value a report gives: its field, its player (per-player fields) and its canonical text."""

    field: MatchField
    player: User | None
    value: str


def game_length(answers: Sequence[Answer]) -> int | None:
    """The game's length in seconds, from its match-level duration answer (the first), if it has one."""
    for answer in answers:
        field = answer.field
        if field.kind == FieldKind.DURATION and field.scope == FieldScope.MATCH and answer.value.isdigit():
            return int(answer.value)
    return None


_NO_FIELDS = "_known_without_match_fields"


def without_fields(ladder: Ladder) -> None:
    """Mark ``ladder`` as read together with the fact that it has no match fields (``api.store``)."""
    setattr(ladder, _NO_FIELDS, True)


def ladder_fields(ladder: Ladder) -> list[MatchField]:
    """The ladder's fields in the order forms show them; none, without a query, for a ladder known to have none."""
    if getattr(ladder, _NO_FIELDS, False):
        return []
    return list(MatchField.objects.filter(ladder=ladder).order_by("position", "id"))


def parse_duration(raw: object) -> int | None:
    """Whole seconds from 1830, "1830", "1:23:45" (h:mm:ss), "83:20" (m:ss), "1h 5m", "45m" or "2d 3h"; else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if not isinstance(raw, str):
        return None
    text = raw.strip().lower()
    if text.isascii() and text.isdigit():
        return int(text)
    if re.fullmatch(r"\d+(:\d{1,2}){1,2}", text):
        *rest, last = (int(part) for part in text.split(":"))
        if last >= 60 or (len(rest) == 2 and rest[1] >= 60):
            return None
        hours, minutes = (rest[0], rest[1]) if len(rest) == 2 else (0, rest[0])
        return hours * 3600 + minutes * 60 + last
    if text and _UNITS.sub("", text).strip() == "":
        return sum(int(number) * _UNIT_SECONDS[unit.lower()] for number, unit in _UNITS.findall(text))
    return None


def format_duration(seconds: int) -> str:
    """1830 → "30:30", 3725 → "1:02:05": how pages show a game's length."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _blank(raw: object) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip())


def clean_value(field: MatchField, raw: object) -> str:
    """The canonical text of one non-blank value, or a ``ValidationError`` naming the field's label."""
    params = {"label": field.label}
    if field.kind == FieldKind.DURATION:
        seconds = parse_duration(raw)
        if seconds is None:
            raise ValidationError(BAD_DURATION, code="invalid_field", params=params)
        if not 1 <= seconds <= DURATION_MAX:
            raise ValidationError(DURATION_RANGE, code="invalid_field", params=params)
        return str(seconds)
    if field.kind == FieldKind.YES_NO:
        word = str(raw).strip().lower() if isinstance(raw, str | bool) else ""
        if word in YES:
            return "yes"
        if word in NO:
            return "no"
        raise ValidationError(BAD_YES_NO, code="invalid_field", params=params)
    if not isinstance(raw, str):
        raise ValidationError(NOT_TEXT, code="invalid_field", params=params)
    text = raw.strip()
    if field.kind == FieldKind.CHOICE:
        by_fold = {choice.casefold(): choice for choice in field.choices}
        if text.casefold() not in by_fold:
            choices = ", ".join(field.choices)
            raise ValidationError(BAD_CHOICE, code="invalid_field", params={**params, "choices": choices})
        return by_fold[text.casefold()]
    if any(unicodedata.category(ch) in {"Cc", "Zl", "Zp"} for ch in text):
        raise ValidationError(CONTROL_CHARACTERS, code="invalid_field", params=params)
    if field.kind == FieldKind.URL:
        try:
            if len(text) > URL_MAX_LENGTH:
                raise ValidationError(BAD_URL)
            _URL(text)
        except ValidationError:
            raise ValidationError(BAD_URL, code="invalid_field", params=params) from None
        return text
    if len(text) > TEXT_MAX_LENGTH:
        raise ValidationError(TEXT_TOO_LONG, code="invalid_field", params=params)
    return text


def _find_player(key: object, players: Sequence[User]) -> User | None:
    """A player of the match by username (any case) or by id."""
    for player in players:
        if isinstance(key, int) and not isinstance(key, bool):
            if player.pk == key:
                return player
        elif isinstance(key, str) and (player.username.lower() == key.lower() or str(player.pk) == key):
            return player
    return None


def clean_answers(
    *,
    ladder: Ladder,
    fields: Sequence[MatchField],
    players: Sequence[User],
    match_values: Mapping[str, object] | None = None,
    player_values: Mapping[object, Mapping[str, object]] | None = None,
) -> list[Answer]:
    """Check a report's values against the ladder's fields; every problem is an error naming its field.

    ``player_values`` is keyed by a player's username or id. A yes/no field that makes a game
    unrated, answered yes, refuses the report after every value checked out.
    """
    by_name = {field.name: field for field in fields}
    errors: dict[str, list[ValidationError]] = {}
    answers: list[Answer] = []

    def refuse(key: str, message: str, code: str = "invalid_field", **params: object) -> None:
        errors.setdefault(key, []).append(ValidationError(message, code=code, params=params))

    def take(key: str, field: MatchField, player: User | None, raw: object) -> None:
        if _blank(raw):
            return
        try:
            answers.append(Answer(field, player, clean_value(field, raw)))
        except ValidationError as exc:
            errors.setdefault(key, []).append(exc)

    match_values = match_values or {}
    for name, raw in match_values.items():
        field = by_name.get(name)
        if field is None:
            refuse(f"fields.{name}", UNKNOWN_FIELD, code="unknown_field", ladder=ladder.name, name=name)
        elif field.per_player:
            refuse(f"fields.{name}", NOT_PER_MATCH, label=field.label)
        else:
            take(f"fields.{name}", field, None, raw)
    for key, values in (player_values or {}).items():
        player = _find_player(key, players)
        if player is None:
            refuse(f"player_fields.{key}", UNKNOWN_PLAYER, code="unknown_player", player=key)
            continue
        for name, raw in values.items():
            where = f"player_fields.{player.username}.{name}"
            field = by_name.get(name)
            if field is None:
                refuse(where, UNKNOWN_FIELD, code="unknown_field", ladder=ladder.name, name=name)
            elif not field.per_player:
                refuse(where, NOT_PER_PLAYER, label=field.label)
            else:
                take(where, field, player, raw)
    given = {(answer.field.pk, answer.player.pk if answer.player else None) for answer in answers}
    for field in fields:
        if not field.required:
            continue
        whose: list[User | None] = list(players) if field.per_player else [None]
        for player in whose:
            key = (field.pk, player.pk if player else None)
            if key in given:
                continue
            where = f"player_fields.{player.username}.{field.name}" if player else f"fields.{field.name}"
            if where not in errors:
                label = f"{field.label} for {player.username}" if player else field.label
                refuse(where, REQUIRED, code="required_field", label=label)
    if errors:
        raise ValidationError(errors)
    _refuse_unrated(answers)
    return answers


def _refuse_unrated(answers: Sequence[Answer]) -> None:
    for answer in answers:
        if answer.field.unrated_when_yes and answer.value == "yes":
            what = unrated_words(answer.field.label)
            key = f"fields.{answer.field.name}"
            if answer.player is not None:
                key = f"player_fields.{answer.player.username}.{answer.field.name}"
            raise ValidationError({key: ValidationError(UNRATED, code="unrated_game", params={"what": what})})


def unrated_words(label: str) -> str:
    """ "AI players took part" → "AI players": the refusal names what the field asks about."""
    words = re.sub(r"\s+(took|take|takes|were|was|played|part|in|used|involved)\b.*$", "", label.strip(), flags=re.I)
    return words or label


def write_answers(match: Match | int, answers: Sequence[Answer]) -> None:
    """Store a report's values; called inside the report's transaction, before the match is rated."""
    if not answers:
        return
    match_id = match if isinstance(match, int) else match.pk
    MatchFieldValue.objects.bulk_create(
        MatchFieldValue(match_id=match_id, field=answer.field, player=answer.player, value=answer.value)
        for answer in answers
    )
