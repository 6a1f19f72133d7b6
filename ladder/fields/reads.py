"""Match fields as pages and the API show them, and match lists filtered by them (docs/match-fields.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, QuerySet

from ladder.fields.answers import format_duration
from ladder.models import FieldKind, Ladder, Match, MatchField, MatchFieldValue


@dataclass(frozen=True, slots=True)
class FieldShown:
    """One value of a match: its field's key and label, its canonical text and the text a page shows."""

    name: str
    label: str
    kind: str
    value: str
    player_id: int | None = None

    @property
    def shown(self) -> str:
        if self.kind == FieldKind.DURATION:
            return format_duration(int(self.value))
        if self.kind == FieldKind.YES_NO:
            return self.value.capitalize()
        return self.value

    @property
    def is_link(self) -> bool:
        return self.kind == FieldKind.URL

    @property
    def typed(self) -> str | int:
        """The value in JSON: whole seconds as a number for a duration, text otherwise."""
        return int(self.value) if self.kind == FieldKind.DURATION else self.value


def shown(values: Iterable[MatchFieldValue]) -> list[FieldShown]:
    """Values (with their ``field`` loaded) in the fields' order."""
    rows = sorted(values, key=lambda v: (v.field.position, v.field_id, v.player_id or 0))
    return [FieldShown(v.field.name, v.field.label, v.field.kind, v.value, v.player_id) for v in rows]


def values_prefetch() -> tuple[str, QuerySet[MatchFieldValue]]:
    """What ``matches_with_details`` prefetches: every value of the matches with its field, in one query."""
    return "field_values", MatchFieldValue.objects.select_related("field")


def field_filters(ladder_slug: str | None, params: Mapping[str, str], known: Iterable[str]) -> dict[str, str]:
    """The ``?map=Crater`` filters of a match list: parameters that are a match field's name.

    ``known`` are the list's own parameters (page, status...), never read as fields. With a
    ladder only its fields count; without, any ladder's. Other unknown names are left to the
    list's own checks (a 400 in the API).
    """
    wanted = {name: value for name, value in params.items() if name not in set(known) and value != ""}
    if not wanted:
        return {}
    fields = MatchField.objects.filter(name__in=list(wanted))
    if ladder_slug:
        fields = fields.filter(ladder__slug=ladder_slug)
    names = set(fields.values_list("name", flat=True))
    return {name: value for name, value in wanted.items() if name in names}


def filter_by_fields(matches: QuerySet[Match], filters: Mapping[str, str]) -> QuerySet[Match]:
    """Matches with each ``name=value`` (any player's value for a per-player field; choices ignore case)."""
    for name, value in filters.items():
        values = MatchFieldValue.objects.filter(match=OuterRef("pk"), field__name=name)
        matches = matches.filter(Exists(values.filter(value__iexact=value.strip())))
    return matches


def ladder_field_dicts(ladder: Ladder) -> list[dict[str, object]]:
    """A ladder's fields as the API lists them, so a bot knows what to send."""
    return [
        {
            "name": f.name,
            "label": f.label,
            "help_text": f.help_text,
            "kind": f.kind,
            "scope": f.scope,
            "required": f.required,
            "choices": list(f.choices) if f.kind == FieldKind.CHOICE else [],
            "unrated_when_yes": f.unrated_when_yes,
        }
        for f in MatchField.objects.filter(ladder=ladder).order_by("position", "id")
    ]
