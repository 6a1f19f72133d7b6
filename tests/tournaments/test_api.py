"""The tournaments API's refusals name the field they are about."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import member
from tournaments import services

pytestmark = pytest.mark.django_db


def test_a_team_entry_of_the_wrong_size_names_teammates_and_a_taken_name_names_name(ladder, moderator, client_for):
    now = timezone.now()
    services.tournament_create(
        ladder=ladder,
        by=moderator,
        name="Pairs",
        slug="pairs",
        team_size=2,
        registration_closes_at=now + timedelta(hours=1),
        starts_at=now + timedelta(hours=1),
    )
    ann, _bob, cy, _dee = (member(ladder, name) for name in ("ann", "bob", "cy", "dee"))
    url = f"/api/v1/ladders/{ladder.slug}/tournaments/pairs/entry/"

    alone = client_for(ann).post(url, {}, format="json")
    assert alone.status_code == 400
    assert alone.json()["error"]["code"] == "team_size" and "teammates" in alone.json()["error"]["fields"]

    assert client_for(ann).post(url, {"teammates": ["bob"], "name": "Ends"}, format="json").status_code == 201
    taken = client_for(cy).post(url, {"teammates": ["dee"], "name": "Ends"}, format="json")
    assert taken.status_code == 409
    assert taken.json()["error"]["code"] == "name_taken" and "name" in taken.json()["error"]["fields"]
