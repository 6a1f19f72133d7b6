from __future__ import annotations

import pytest
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import MatchField, MatchFieldValue


@pytest.fixture
def details(ladder):
    """The ladder's map (per match) and tribe (per player) fields."""
    return (
        MatchField.objects.create(ladder=ladder, name="map", label="Map", kind="choice", choices=["Crater", "Nile"]),
        MatchField.objects.create(
            ladder=ladder, name="tribe", label="Tribe", kind="choice", scope="player", choices=["Empire", "Frisians"]
        ),
    )


@pytest.fixture
def played(ladder, player, opponent, details):
    """Two confirmed games: alice beat bob on Crater as Empire, then drew on the Nile."""
    map_field, tribe_field = details
    matches = []
    for placements, map_name in (((1, 2), "Crater"), ((1, 1), "Nile")):
        match = svc.match_report(
            ladder=ladder,
            reporter=player,
            sides=[SideInput([player], placements[0]), SideInput([opponent], placements[1])],
        )
        MatchFieldValue.objects.create(match=match, field=map_field, value=map_name)
        MatchFieldValue.objects.create(match=match, field=tribe_field, player=player, value="Empire")
        MatchFieldValue.objects.create(match=match, field=tribe_field, player=opponent, value="Frisians")
        svc.match_confirm(match=match, user=opponent, now=timezone.now())
        matches.append(match)
    return matches
