"""Match fields through the API (docs/match-fields.md): reports and queue results carry them,
bad values are a 400 naming the field, match JSON and the ladder's JSON show them, lists filter
by them, and the schema describes them."""

from __future__ import annotations

import pytest

from ladder.models import MatchFieldValue
from tests.api.conftest import error_of, report_body
from tests.api.test_lifecycle_api import _pair, _post
from tests.ladder.match_fields_cast import TRIBES, add_fields

pytestmark = pytest.mark.django_db


@pytest.fixture
def fields(ladder):
    return add_fields(ladder)


def report(client, ladder, **extra):
    return client.post("/api/v1/matches/", report_body(ladder, **extra), format="json")


def test_a_report_with_every_kind(client_for, ladder, fields, player, opponent):
    response = report(
        client_for(player),
        ladder,
        fields={"map": "Crater", "game_length": 1830, "ai": False, "replay": "https://example.org/r/1"},
        player_fields={"Alice": {"tribe": "Empire"}, "bob": {"tribe": "frisians"}},
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["fields"] == {"map": "Crater", "game_length": 1830, "ai": "no", "replay": "https://example.org/r/1"}
    assert body["player_fields"] == {"alice": {"tribe": "Empire"}, "bob": {"tribe": "Frisians"}}
    assert MatchFieldValue.objects.filter(match_id=body["id"]).count() == 6
    again = client_for(player).get(body["url"]).json()
    assert again["fields"] == body["fields"] and again["player_fields"] == body["player_fields"]


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ({"fields": {"map": "x" * 201}}, "fields.map", "Map has at most 200 characters."),
        (
            {"fields": {"map": "a\tb"}},
            "fields.map",
            "Map cannot contain control characters such as line breaks or tabs.",
        ),
        ({"fields": {"map": 5}}, "fields.map", "Map is text."),
        ({"player_fields": {"alice": {"tribe": "Orcs"}}}, "player_fields.alice.tribe", "Tribe must be one of: "),
        ({"fields": {"game_length": "later"}}, "fields.game_length", "Game length is a duration such as"),
        ({"fields": {"game_length": 0}}, "fields.game_length", "Game length is between 1 second and 7 days."),
        ({"fields": {"ai": "perhaps"}}, "fields.ai", "AI players took part is yes or no."),
        ({"fields": {"replay": "ftp://x.org/r"}}, "fields.replay", "Replay is a link starting with http://"),
        ({"fields": {"colour": "red"}}, "fields.colour", "Chess has no match field “colour”."),
        ({"fields": {"tribe": "Empire"}}, "fields.tribe", "Tribe is given per player, under player_fields."),
        ({"player_fields": {"carol": {"tribe": "Empire"}}}, "player_fields.carol", "carol is not a player"),
        ({"fields": {"ai": "yes"}}, "fields.ai", "This ladder does not rate games with AI players."),
    ],
)
def test_bad_values_are_a_400_naming_the_field(client_for, ladder, fields, player, opponent, extra, key, message):
    response = report(client_for(player), ladder, **extra)

    assert response.status_code == 400
    error = error_of(response)
    assert list(error["fields"]) == [key]
    assert error["fields"][key][0].startswith(message)
    assert not MatchFieldValue.objects.exists()


def test_a_value_of_the_wrong_json_type_is_a_400(client_for, ladder, fields, player, opponent):
    response = report(client_for(player), ladder, fields={"map": ["Crater"]})
    assert response.status_code == 400 and "fields.map" in error_of(response)["fields"]


def test_required_fields_must_be_sent(client_for, ladder, player, opponent):
    add_fields(ladder, required_map=True)
    response = report(client_for(player), ladder)
    assert response.status_code == 400
    assert error_of(response)["fields"] == {"fields.map": ["Map is required."]}


def test_a_ladder_without_fields_takes_reports_as_before(client_for, ladder, player, opponent):
    response = report(client_for(player), ladder)
    assert response.status_code == 201 and response.json()["fields"] == {} and response.json()["player_fields"] == {}


def test_a_queue_match_s_result_carries_fields(client_for, ladder, fields, player, opponent):
    alice, bob = client_for(player), client_for(opponent)
    match_id = _pair(ladder, player, opponent)
    for client in (alice, bob):
        assert _post(client, match_id, "ready/").status_code == 200

    refused = _post(alice, match_id, "result/", {"placements": [1, 2], "fields": {"game_length": "forever"}})
    accepted = _post(
        alice,
        match_id,
        "result/",
        {"placements": [1, 2], "fields": {"map": "Crater"}, "player_fields": {"bob": {"tribe": "Amazons"}}},
    )

    assert refused.status_code == 400 and list(error_of(refused)["fields"]) == ["fields.game_length"]
    assert accepted.status_code == 200, accepted.json()
    assert accepted.json()["fields"] == {"map": "Crater"}
    assert accepted.json()["player_fields"] == {"bob": {"tribe": "Amazons"}}


def test_the_ladder_lists_its_fields(api, ladder, fields):
    listed = api.get(f"/api/v1/ladders/{ladder.slug}/").json()["fields"]

    assert [f["name"] for f in listed] == ["map", "tribe", "game_length", "ai", "replay"]
    assert listed[1] == {
        "name": "tribe",
        "label": "Tribe",
        "help_text": "",
        "kind": "choice",
        "scope": "player",
        "required": False,
        "choices": TRIBES,
        "unrated_when_yes": False,
    }
    assert listed[3]["unrated_when_yes"] is True


def test_the_match_list_filters_by_field_values(api, client_for, ladder, fields, player, opponent):
    from datetime import timedelta

    from django.utils import timezone

    reporter = client_for(player)
    ids = []
    for hours, (map_name, tribe) in enumerate([("Crater", "Empire"), ("Valley", "Empire"), ("Crater", "Amazons")]):
        played = (timezone.now() - timedelta(hours=hours + 1)).isoformat()
        body = report(
            reporter, ladder, played_at=played, fields={"map": map_name}, player_fields={"alice": {"tribe": tribe}}
        ).json()
        ids.append(body["id"])

    def listed(**params) -> list[int]:
        response = api.get("/api/v1/matches/", params)
        assert response.status_code == 200, response.json()
        return [match["id"] for match in response.json()["results"]]

    assert listed(ladder="chess", map="Crater") == [ids[0], ids[2]]
    assert listed(map="crater", tribe="Empire") == [ids[0]]
    assert listed(ladder="chess", tribe="Frisians") == []
    assert api.get("/api/v1/matches/", {"colour": "red"}).status_code == 400  # not a field: still a typo


def test_the_schema_describes_the_fields(api):
    schema = api.get("/api/v1/schema/").json()
    parts = schema["components"]["schemas"]

    report_in = parts["ReportInRequest"]
    assert report_in.get("additionalProperties") is False or "additionalProperties" not in report_in
    assert set(report_in["properties"]) >= {"fields", "player_fields"}
    value = report_in["properties"]["fields"]["additionalProperties"]
    assert {option["type"] for option in value["oneOf"] if "type" in option} == {"string", "integer", "boolean"}
    assert [o for o in value["oneOf"] if "type" not in o] == [{"$ref": "#/components/schemas/NullEnum"}]  # or null
    per_player = report_in["properties"]["player_fields"]["additionalProperties"]["additionalProperties"]
    assert per_player["oneOf"] == value["oneOf"]
    match_out = parts["MatchOut"]["properties"]
    assert {o["type"] for o in match_out["fields"]["additionalProperties"]["oneOf"]} == {"string", "integer"}
    assert "player_fields" in parts["MatchOut"]["required"]
    assert parts["MatchFieldOut"]["properties"]["kind"]["$ref"].endswith("KindEnum")
    assert "fields" in parts["LadderDetailOut"]["properties"]
    assert "fields" in parts["ResultInRequest"]["properties"]
