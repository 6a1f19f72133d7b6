"""The match fields of a report form (docs/match-fields.md).

``MatchFieldsForm`` only lays the ladder's fields out and collects what was typed; the
checks are ``ladder.fields.answers.clean_answers``'s, whose errors (keyed ``fields.<name>``
or ``player_fields.<username>.<name>``) ``show_errors`` puts back next to their inputs.

Per-player fields get one input per player where the form knows the players (a 1 v 1: you
and your opponent; a queue match: its players). The sides form, whose players are typed
in, asks for a choice as rows of (username, select of the choices), as many as a game's
players, and for the other kinds as "username: value" pairs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from accounts.models import User
from ladder.fields.answers import format_duration, ladder_fields
from ladder.matches.field_corrections import REASON_MAX_LENGTH
from ladder.models import FieldKind, Match, MatchField, MatchFieldValue

DURATION_HINT = "For example 1:23:45, 83:20, 1h 5m, 45m, or a number of seconds."
PAIRS_HINT = "Each player as “username: value”, separated by commas."
BAD_PAIR = "Write each player as “username: value”, separated by commas: “%(pair)s” has no colon."
PICK_WITHOUT_PLAYER = "Type the username of the player for %(value)s."
PICK_HINT = "Type each player's username and pick theirs; leave the rows you do not need empty."


@dataclass(frozen=True, slots=True)
class Slot:
    """A player the form asks per-player fields for: a key in the inputs' names and the words shown."""

    key: str
    label: str


@dataclass(frozen=True, slots=True)
class PlayerGroup:
    label: str
    fields: list[forms.BoundField]


@dataclass(frozen=True, slots=True)
class PickRow:
    """One row of a choice picked per player in the sides form: the username typed, the choice picked."""

    number: int
    player: forms.BoundField
    value: forms.BoundField


@dataclass(frozen=True, slots=True)
class PickGroup:
    """A per-player choice in the sides form, as rows; ``errors`` are those no row holds (a player left out)."""

    field: MatchField
    html_id: str
    help_text: str
    rows: list[PickRow]
    errors: list[str]
    is_pick: bool = True  # tells the template this is not a BoundField


def _input(field: MatchField, label: str) -> forms.Field:
    """The input of one field: a select, a yes/no choice, a link, a duration or a line of text."""
    help_text = field.help_text
    attrs: dict[str, str] = {}
    if field.kind == FieldKind.CHOICE:
        widget: forms.Widget = forms.Select(choices=[("", "—")] + [(c, c) for c in field.choices])
    elif field.kind == FieldKind.YES_NO:
        widget = forms.RadioSelect(choices=[("yes", "Yes"), ("no", "No")])
    elif field.kind == FieldKind.URL:
        widget = forms.URLInput(attrs={"maxlength": "500", "inputmode": "url", "autocapitalize": "none"})
    elif field.kind == FieldKind.DURATION:
        widget = forms.TextInput(attrs={"placeholder": "45:00", "autocomplete": "off", "spellcheck": "false"})
        help_text = f"{help_text} {DURATION_HINT}".strip()
    else:
        widget = forms.TextInput(attrs={"maxlength": "200"})
    if field.required:
        attrs["aria-required"] = "true"
    widget.attrs.update(attrs)
    # Never required here: the service's message names the field ("Map is required.").
    made = forms.CharField(label=label, required=False, widget=widget, help_text=help_text, strip=False)
    made.match_field = field  # type: ignore[attr-defined]  # read by the template for the required mark
    return made


class MatchFieldsForm(forms.Form):
    def __init__(
        self,
        data: Any = None,
        *,
        fields: Sequence[MatchField],
        slots: Sequence[Slot] = (),
        pairs: bool = False,
        player_rows: int = 0,
        prefix: str = "f",
    ) -> None:
        """``pairs``: the players are typed in the form; a choice then gets ``player_rows`` rows to pick in."""
        super().__init__(data, prefix=prefix)
        self.match_fields = list(fields)
        self.slots = list(slots)
        self.pairs = pairs
        self.player_rows = player_rows
        self.pick_errors: dict[str, list[str]] = {}
        self.players: list[User] = []  # the match's players, where the form is for a match already paired
        self.by_slot: dict[str, User] = {}
        for field in self.match_fields:
            if not field.per_player:
                self.fields[field.name] = _input(field, field.label)
            elif pairs and field.kind == FieldKind.CHOICE:
                for number in range(1, player_rows + 1):
                    player = forms.CharField(
                        label=f"Player {number}",
                        required=False,
                        max_length=150,
                        widget=forms.TextInput(
                            attrs={
                                "autocomplete": "off",
                                "autocapitalize": "none",
                                "spellcheck": "false",
                                "placeholder": "Username",
                            }
                        ),
                    )
                    self.fields[_pick_player(field.name, number)] = player
                    value = _input(field, f"{field.label} of player {number}")
                    value.widget.attrs.pop("aria-required", None)  # a row is optional; the group says "required"
                    value.help_text = ""
                    self.fields[_pick_value(field.name, number)] = value
            elif pairs:
                made = _input(field, field.label)
                made.widget = forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "none"})
                made.help_text = f"{field.help_text} {PAIRS_HINT}".strip()
                self.fields[field.name] = made
            else:
                for slot in self.slots:
                    self.fields[f"{field.name}__{slot.key}"] = _input(field, f"{field.label} ({slot.label})")

        for name, made in self.fields.items():
            if made.help_text and not isinstance(made.widget, forms.RadioSelect):  # a radio's fieldset has it
                made.widget.attrs["aria-describedby"] = f"id_{self.add_prefix(name)}-help"

    @property
    def has_fields(self) -> bool:
        return bool(self.match_fields)

    def match_rows(self) -> list[forms.BoundField | PickGroup]:
        """The inputs under "Game details" in the fields' order; in the sides form a choice's rows as one group."""
        rows: list[forms.BoundField | PickGroup] = []
        for field in self.match_fields:
            if self._picked(field):
                rows.append(self._pick_group(field))
            elif not field.per_player or self.pairs:
                rows.append(self[field.name])
        return rows

    def _picked(self, field: MatchField) -> bool:
        return self.pairs and field.per_player and field.kind == FieldKind.CHOICE

    def _pick_group(self, field: MatchField) -> PickGroup:
        rows = [
            PickRow(n, self[_pick_player(field.name, n)], self[_pick_value(field.name, n)])
            for n in range(1, self.player_rows + 1)
        ]
        return PickGroup(
            field=field,
            html_id=f"id_{self.add_prefix(field.name)}",
            help_text=f"{field.help_text} {PICK_HINT}".strip(),
            rows=rows,
            errors=self.pick_errors.get(field.name, []),
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for field in filter(self._picked, self.match_fields):
            for number in range(1, self.player_rows + 1):
                player, value = self._pick(cleaned, field.name, number)
                if value and not player:
                    self.add_error(
                        _pick_player(field.name, number), ValidationError(PICK_WITHOUT_PLAYER, params={"value": value})
                    )
        return cleaned

    @staticmethod
    def _pick(cleaned: Mapping[str, Any], name: str, number: int) -> tuple[str, str]:
        """A row's username and choice, as typed and picked (a choice posted by hand is left to the service)."""
        player = (cleaned.get(_pick_player(name, number)) or "").strip()
        return player, (cleaned.get(_pick_value(name, number)) or "").strip()

    def player_groups(self) -> list[PlayerGroup]:
        per_player = [f for f in self.match_fields if f.per_player]
        if self.pairs or not per_player:
            return []
        return [PlayerGroup(slot.label, [self[f"{f.name}__{slot.key}"] for f in per_player]) for slot in self.slots]

    def match_values(self) -> dict[str, object]:
        return {f.name: self.cleaned_data.get(f.name, "") for f in self.match_fields if not f.per_player}

    def player_values(self, players: Mapping[str, User]) -> dict[object, dict[str, object]]:
        """What was typed per player: by player id (slots) or by the username typed (pairs)."""
        values: dict[object, dict[str, object]] = {}
        for field in (f for f in self.match_fields if f.per_player):
            if self._picked(field):
                for number in range(1, self.player_rows + 1):
                    who, value = self._pick(self.cleaned_data, field.name, number)
                    if who:  # an empty row is not an answer
                        values.setdefault(who, {})[field.name] = value
                continue
            if self.pairs:
                for name, value in self._pairs(field.name):
                    values.setdefault(name, {})[field.name] = value
                continue
            for slot in self.slots:
                player = players.get(slot.key)
                if player is not None:
                    values.setdefault(player.pk, {})[field.name] = self.cleaned_data.get(f"{field.name}__{slot.key}")
        return values

    def _pairs(self, name: str) -> list[tuple[str, str]]:
        pairs = []
        for part in (p.strip() for p in re.split(r"[,\n]", self.cleaned_data.get(name) or "")):
            if not part:
                continue
            if ":" not in part:
                raise ValidationError({f"fields.{name}": ValidationError(BAD_PAIR, params={"pair": part})})
            who, value = part.split(":", 1)
            pairs.append((who.strip(), value.strip()))
        return pairs

    def show_errors(self, exc: ValidationError, players: Mapping[str, User]) -> None:
        """The service's errors next to their inputs; one it cannot place goes above the form."""
        slot_of = {player.username.lower(): key for key, player in players.items()}
        typed = dict(self.cleaned_data)  # add_error drops what it marks
        for key, messages in exc.message_dict.items():
            parts = key.split(".")
            target = None
            if parts[0] == "fields" and len(parts) == 2:
                target = parts[1]
            elif parts[0] == "player_fields" and len(parts) == 2 and self._rows_of(typed, parts[1]):
                # A username no player has: next to where it was typed.
                for name, number in self._rows_of(typed, parts[1]):
                    self.add_error(_pick_player(name, number), messages)
                continue
            elif parts[0] == "player_fields" and len(parts) == 3 and self._is_picked(parts[2]):
                rows = [number for name, number in self._rows_of(typed, parts[1]) if name == parts[2]]
                for number in rows:  # the message says whose value is wrong
                    self.add_error(_pick_value(parts[2], number), [f"{parts[1]}: {message}" for message in messages])
                if not rows:  # a player nobody picked for: "Tribe for dan is required."
                    self.pick_errors.setdefault(parts[2], []).extend(messages)
                continue
            elif parts[0] == "player_fields" and len(parts) == 3:
                slot = slot_of.get(parts[1].lower())
                target = parts[2] if self.pairs else f"{parts[2]}__{slot}"
                if self.pairs:  # one input holds every player's value: say whose is wrong
                    messages = [f"{parts[1]}: {message}" for message in messages]
            self.add_error(target if target in self.fields else None, messages)

    def _is_picked(self, name: str) -> bool:
        return any(field.name == name and self._picked(field) for field in self.match_fields)

    def _rows_of(self, typed: Mapping[str, Any], username: str) -> list[tuple[str, int]]:
        """The (field name, row number) of every picking row where ``username`` was typed, in any case."""
        found = []
        for field in filter(self._picked, self.match_fields):
            for number in range(1, self.player_rows + 1):
                if self._pick(typed, field.name, number)[0].lower() == username.lower():
                    found.append((field.name, number))
        return found


def _pick_player(name: str, number: int) -> str:
    return f"{name}__row{number}_player"


def _pick_value(name: str, number: int) -> str:
    return f"{name}__row{number}"


def result_fields_form(match: Match, viewer: User, data: Any = None) -> MatchFieldsForm:
    """The fields of a queue match's result form: one input per player for per-player fields ("You" first)."""
    fields = list(MatchField.objects.filter(ladder_id=match.ladder_id).order_by("position", "id"))
    players: list[User] = []
    if any(field.per_player for field in fields):
        players = list(User.objects.filter(participations__match=match).order_by("participations__id"))
        players.sort(key=lambda player: player.pk != viewer.pk)
    form = MatchFieldsForm(
        data, fields=fields, slots=[Slot(str(p.pk), "You" if p.pk == viewer.pk else p.username) for p in players]
    )
    form.players = players
    form.by_slot = {str(player.pk): player for player in players}
    return form


class DetailsEditForm(MatchFieldsForm):
    """The ladder's match fields for this match's players, then the reason for the change."""

    def __init__(self, data: Any = None, *, match: Match) -> None:
        players = list(User.objects.filter(participations__match=match).order_by("participations__id"))
        super().__init__(
            data,
            fields=ladder_fields(match.ladder),
            slots=[Slot(str(player.pk), player.username) for player in players],
            prefix="details",
        )
        self.players = players
        self.by_slot = {str(player.pk): player for player in players}
        self.fields["reason"] = forms.CharField(
            label="Reason for the change",
            max_length=REASON_MAX_LENGTH,
            widget=forms.Textarea(attrs={"rows": 2, "cols": 60, "aria-describedby": "id_details-reason-help"}),
            help_text="Required. Kept with the match in its moderator note.",
        )
        if data is None:
            self.initial = _current(match)

    def answers(self) -> dict[str, Any]:
        """What was posted, as ``match_fields_correct`` takes it (after ``is_valid()``)."""
        return {"fields": self.match_values(), "player_fields": self.player_values(self.by_slot)}

    def show_refusal(self, exc: ValidationError) -> None:
        if not hasattr(exc, "error_dict"):
            self.add_error(None, exc)
            return
        if "reason" in exc.error_dict:
            self.add_error("reason", exc.error_dict.pop("reason"))
        if exc.error_dict:
            self.show_errors(exc, self.by_slot)


def _current(match: Match) -> dict[str, str]:
    """The inputs' values now: durations as pages show them, per-player values under each player's input."""
    initial = {}
    for value in MatchFieldValue.objects.filter(match=match).select_related("field"):
        shown = format_duration(int(value.value)) if value.field.kind == FieldKind.DURATION else value.value
        name = value.field.name if value.player_id is None else f"{value.field.name}__{value.player_id}"
        initial[name] = shown
    return initial
