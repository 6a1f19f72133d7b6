"""Match fields on a series game through the API: ``POST matches/<id>/games/`` takes ``fields`` and
``player_fields`` as a result does (docs/rules.md §13, "Series"; docs/match-fields.md)."""

from __future__ import annotations

import pytest

from ladder.models import MatchFieldValue, SeriesGame
from tests.api.conftest import _games, _side, error_of
from tests.ladder.match_fields_cast import add_fields

pytestmark = pytest.mark.django_db


def values_of(match_id: int) -> dict[tuple[str, str | None], str]:
    rows = MatchFieldValue.objects.filter(match_id=match_id).select_related("field", "player")
    return {(row.field.name, row.player.username if row.player else None): row.value for row in rows}


@pytest.mark.ladder(best_of=3)
def test_a_series_game_carries_the_fields_of_the_series_match(ladder, clients, scheduled, player, api):
    add_fields(ladder)
    alice, bob = clients
    mine = _side(scheduled, player)
    body = {"winner_side": mine, "fields": {"map": "Crater", "game_length": "45m"}}
    first = _games(alice, scheduled, {**body, "player_fields": {"Bob": {"tribe": "empire"}}})
    assert first.status_code == 200, first.content
    assert first.json()["fields"] == {"map": "Crater", "game_length": 2700}
    assert first.json()["player_fields"] == {"bob": {"tribe": "Empire"}}

    second = _games(bob, scheduled, {"winner_side": mine, "fields": {"map": "The Nile"}})
    assert second.status_code == 200, second.content
    assert second.json()["status"] == "pending"
    assert values_of(scheduled) == {
        ("map", None): "The Nile",
        ("game_length", None): "2700",
        ("tribe", "bob"): "Empire",
    }


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_each_rated_game_carries_its_own_fields(ladder, clients, scheduled, player):
    add_fields(ladder)
    alice, _ = clients
    response = _games(alice, scheduled, {"winner_side": 0, "player_fields": {"alice": {"tribe": "Amazons"}}})
    assert response.status_code == 200, response.content
    game_match = SeriesGame.objects.get(match_id=scheduled).game_match_id
    assert game_match is not None
    assert values_of(game_match) == {("tribe", "alice"): "Amazons"} and values_of(scheduled) == {}


@pytest.mark.ladder(best_of=3)
def test_an_unknown_choice_is_a_400_naming_the_field(ladder, clients, scheduled):
    add_fields(ladder)
    alice, _ = clients
    response = _games(alice, scheduled, {"winner_side": 0, "player_fields": {"alice": {"tribe": "Orcs"}}})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_field"
    assert list(error["fields"]) == ["player_fields.alice.tribe"]
    assert error["fields"]["player_fields.alice.tribe"][0].startswith("Tribe must be one of: ")
    assert not SeriesGame.objects.exists()


@pytest.mark.ladder(best_of=3)
def test_the_deciding_game_without_a_required_field_is_a_400_and_records_nothing(ladder, clients, scheduled):
    add_fields(ladder, required_map=True)
    alice, _ = clients
    assert _games(alice, scheduled, {"winner_side": 0}).status_code == 200  # game 1 of 3: the map may wait
    response = _games(alice, scheduled, {"winner_side": 0})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "required_field" and error["fields"] == {"fields.map": ["Map is required."]}
    assert SeriesGame.objects.filter(match_id=scheduled).count() == 1


def test_the_schema_says_a_series_game_takes_the_fields(api):
    schema = api.get("/api/v1/schema/").json()
    body = schema["components"]["schemas"]["SeriesGameInRequest"]
    assert body["additionalProperties"] is False
    result = schema["components"]["schemas"]["ResultInRequest"]["properties"]
    assert body["properties"]["fields"] == result["fields"]
    assert body["properties"]["player_fields"] == result["player_fields"]
