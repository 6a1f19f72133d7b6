"""The match fields the match-field tests share: `ladder` (Chess) asks for a Widelands-like set."""

from __future__ import annotations

from ladder.models import FieldKind, FieldScope, MatchField

TRIBES = ["Barbarians", "Empire", "Atlanteans", "Frisians", "Amazons"]


def add_fields(ladder, *, required_map: bool = False) -> dict[str, MatchField]:
    """map (text), tribe (choice per player), game_length (duration), ai (yes/no, unrated when yes), replay (URL)."""
    made = [
        MatchField(ladder=ladder, name="map", label="Map", kind=FieldKind.TEXT, required=required_map, position=1),
        MatchField(
            ladder=ladder,
            name="tribe",
            label="Tribe",
            kind=FieldKind.CHOICE,
            scope=FieldScope.PLAYER,
            choices=TRIBES,
            position=2,
        ),
        MatchField(ladder=ladder, name="game_length", label="Game length", kind=FieldKind.DURATION, position=3),
        MatchField(
            ladder=ladder,
            name="ai",
            label="AI players took part",
            kind=FieldKind.YES_NO,
            unrated_when_yes=True,
            position=4,
        ),
        MatchField(ladder=ladder, name="replay", label="Replay", kind=FieldKind.URL, position=5),
    ]
    return {field.name: field for field in MatchField.objects.bulk_create(made)}
