"""``seed_demo_fields``: the demo ladders' match fields, and values on their matches (docs/match-fields.md).

Widelands Teams asks for the map, each player's tribe, the win condition, the game's length,
whether AI players took part (such games are not rated) and a replay link; Pokémon Singles
for the format and a replay link. Every played match of those ladders without values gets
some, drawn from a generator seeded by the match's id, so a second run changes nothing.
Run after ``seed_demo``.
"""

from __future__ import annotations

import random
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ladder.models import OPEN_STATUSES, FieldKind, FieldScope, Ladder, Match, MatchField, MatchFieldValue, MatchStatus

TRIBES = ["Barbarians", "Empire", "Atlanteans", "Frisians", "Amazons"]
WIN_CONDITIONS = ["Autocrat", "Territorial Lord", "Wood Gnome", "Collectors", "Endless game"]
MAPS = ["Crater", "The Nile", "Four Castles", "Twinkling Waves", "Lesser Ring", "Fellowships", "Calvisson", "Firegames"]
FORMATS = ["Gen 9 OU", "Gen 9 Ubers", "Gen 9 UU", "Gen 9 Random Battle"]

WIDELANDS = "widelands-teams"
POKEMON = "pokemon-singles"
FIELDS: dict[str, list[dict[str, Any]]] = {
    WIDELANDS: [
        {"name": "map", "label": "Map", "kind": FieldKind.TEXT, "help_text": "The map's name, as in the game."},
        {"name": "tribe", "label": "Tribe", "kind": FieldKind.CHOICE, "scope": FieldScope.PLAYER, "choices": TRIBES},
        {"name": "win_condition", "label": "Win condition", "kind": FieldKind.CHOICE, "choices": WIN_CONDITIONS},
        {"name": "game_length", "label": "Game length", "kind": FieldKind.DURATION},
        {
            "name": "ai",
            "label": "AI players took part",
            "kind": FieldKind.YES_NO,
            "unrated_when_yes": True,
            "help_text": "Games with AI players are not rated here.",
        },
        {"name": "replay", "label": "Replay", "kind": FieldKind.URL, "help_text": "A link to the replay file."},
    ],
    POKEMON: [
        {"name": "format", "label": "Format", "kind": FieldKind.CHOICE, "choices": FORMATS, "required": True},
        {"name": "replay", "label": "Replay", "kind": FieldKind.URL, "help_text": "The battle's replay link."},
    ],
}


class Command(BaseCommand):
    help = "Give the demo ladders match fields (map, tribe, format...) and their matches values. Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="Run even with DEBUG off.")

    def handle(self, *args: Any, force: bool = False, **options: Any) -> None:
        if not settings.DEBUG and not force:
            raise CommandError("seed_demo_fields changes the demo ladders; with DEBUG off, pass --force.")
        written = 0
        with transaction.atomic():
            for slug, specs in FIELDS.items():
                ladder = Ladder.objects.filter(slug=slug).first()
                if ladder is None:
                    raise CommandError(f"No ladder {slug}: run seed_demo first.")
                fields = self._define(ladder, specs)
                written += self._values(ladder, fields)
        self.stdout.write(self.style.SUCCESS(f"Demo match fields ready: {written} values written."))

    def _define(self, ladder: Ladder, specs: list[dict[str, Any]]) -> dict[str, MatchField]:
        fields = {}
        for position, spec in enumerate(specs, start=1):
            values = {"position": position, **{k: v for k, v in spec.items() if k != "name"}}
            field, _ = MatchField.objects.update_or_create(ladder=ladder, name=spec["name"], defaults=values)
            field.full_clean()
            fields[field.name] = field
        return fields

    def _values(self, ladder: Ladder, fields: dict[str, MatchField]) -> int:
        """Values for each played match that has none yet; AI games never, since they would not be rated."""
        matches = (
            Match.objects.filter(ladder=ladder, field_values__isnull=True)
            .exclude(status__in=[*OPEN_STATUSES, MatchStatus.CANCELLED])
            .prefetch_related("participants")
            .order_by("pk")
        )
        rows = []
        for match in matches:
            rng = random.Random(f"{ladder.slug}-{match.pk}")
            if ladder.slug == WIDELANDS:
                rows += self._widelands(match, fields, rng)
            else:
                rows += self._pokemon(match, fields, rng)
        MatchFieldValue.objects.bulk_create(rows, batch_size=1000)
        return len(rows)

    def _widelands(self, match: Match, fields: dict[str, MatchField], rng: random.Random) -> list[MatchFieldValue]:
        rows = [
            MatchFieldValue(match=match, field=fields["map"], value=rng.choice(MAPS)),
            MatchFieldValue(match=match, field=fields["win_condition"], value=rng.choice(WIN_CONDITIONS[:4])),
            MatchFieldValue(match=match, field=fields["game_length"], value=str(rng.randint(20, 180) * 60)),
            MatchFieldValue(match=match, field=fields["ai"], value="no"),
        ]
        if rng.random() < 0.4:
            url = f"https://replays.example.org/widelands/{match.pk}.wry"
            rows.append(MatchFieldValue(match=match, field=fields["replay"], value=url))
        weights = [3, 3, 2, 2, 1]  # the older tribes are played more
        for participant in match.participants.all():
            tribe = rng.choices(TRIBES, weights)[0]
            rows.append(
                MatchFieldValue(match=match, field=fields["tribe"], player_id=participant.player_id, value=tribe)
            )
        return rows

    def _pokemon(self, match: Match, fields: dict[str, MatchField], rng: random.Random) -> list[MatchFieldValue]:
        battle = rng.choices(FORMATS, [6, 1, 2, 3])[0]
        rows = [MatchFieldValue(match=match, field=fields["format"], value=battle)]
        if rng.random() < 0.6:
            code = battle.lower().replace(" ", "")
            url = f"https://replays.example.org/showdown/{code}-{match.pk}"
            rows.append(MatchFieldValue(match=match, field=fields["replay"], value=url))
        return rows
