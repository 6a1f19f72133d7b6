"""What the schema declares beyond bodies: headers, the 503, page defaults, key limits, its own formats."""

from __future__ import annotations

import pytest
import yaml

from api.pagination import ApiPagination
from tests.api.conftest import error_of, report_body
from tests.api.openapi import Recorded, Recorder

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(api) -> dict:
    return api.get("/api/v1/schema/").json()


def _operations(schema: dict):
    for operations in schema["paths"].values():
        yield from operations.values()


def test_every_operation_declares_the_503_and_retry_after_on_its_429_and_503(schema):
    for operation in _operations(schema):
        for status in ("429", "503"):
            response = operation["responses"][status]
            assert response["headers"]["Retry-After"]["required"] is True, (operation["operationId"], status)
            assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorOut"}


def test_a_replayed_report_says_so_in_a_declared_header(schema, client_for, player, opponent, ladder):
    created = schema["paths"]["/api/v1/matches/"]["post"]["responses"]["201"]
    assert created["headers"]["Idempotent-Replayed"]["schema"] == {"type": "string", "enum": ["true"]}
    client = client_for(player)
    recorded = Recorder(schema)
    first = recorded.check(
        "post",
        "/api/v1/matches/",
        client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k 1"),
    )
    again = recorded.check(
        "post",
        "/api/v1/matches/",
        client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k 1"),
    )
    assert first.status_code == again.status_code == 201
    assert not first.has_header("Idempotent-Replayed") and again["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    ("key", "accepted"), [("x" * 255, True), ("x" * 256, False), ("caf\u00e9", False), ("a\x7fb", False)]
)
def test_the_idempotency_key_limits_are_in_the_schema_and_enforced(
    schema, client_for, player, opponent, ladder, key, accepted
):
    import re

    (declared,) = [
        parameter["schema"]
        for parameter in schema["paths"]["/api/v1/matches/"]["post"]["parameters"]
        if parameter["name"] == "Idempotency-Key"
    ]
    assert (declared["minLength"], declared["maxLength"]) == (1, 255)
    fits = 1 <= len(key) <= 255 and re.fullmatch(declared["pattern"], key) is not None
    assert fits is accepted
    response = client_for(player).post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert (response.status_code == 201) is accepted
    if not accepted:
        assert error_of(response)["code"] == "bad_idempotency_key"


def test_pages_declare_their_default_and_maximum(schema):
    seen = 0
    for operation in _operations(schema):
        for parameter in operation.get("parameters", []):
            if parameter["name"] == "page_size":
                assert parameter["schema"]["default"] == ApiPagination.page_size, operation["operationId"]
                assert parameter["schema"]["maximum"] == ApiPagination.max_page_size, operation["operationId"]
                seen += 1
            if parameter["name"] == "page":
                assert parameter["schema"]["default"] == 1, operation["operationId"]
    assert seen >= 8


def test_a_page_past_the_end_has_its_own_code(schema, api, player):
    recorded = Recorded(api, Recorder(schema))
    past = recorded.get("/api/v1/players/alice/matches/", {"page": 2})
    assert past.status_code == 404
    assert error_of(past)["code"] == "no_such_page" and "page" in error_of(past)["fields"]
    missing = recorded.get("/api/v1/players/ghost/matches/", {"page": 2})
    assert error_of(missing)["code"] == "not_found"


def test_the_schema_comes_as_yaml_when_asked_and_refuses_other_formats(api):
    as_json = api.get("/api/v1/schema/").json()
    as_yaml = api.get("/api/v1/schema/", {"format": "yaml"})
    assert as_yaml.status_code == 200 and as_yaml["Content-Type"].startswith("application/vnd.oai.openapi;")
    assert yaml.safe_load(as_yaml.content) == as_json
    assert api.get("/api/v1/schema/", {"format": "json"}).json() == as_json
    refused = api.get("/api/v1/schema/", {"format": "xml"})
    assert refused.status_code == 400 and error_of(refused)["code"] == "bad_format"


def test_each_process_generates_the_schema_once_until_a_setting_changes(api, settings, monkeypatch):
    from drf_spectacular.generators import SchemaGenerator

    api.get("/api/v1/schema/")  # whatever an earlier test left, generated now at the latest
    generated = []
    original = SchemaGenerator.get_schema

    def counted(self, *args, **kwargs):
        generated.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counted)
    first = api.get("/api/v1/schema/").json()
    assert api.get("/api/v1/schema/", {"format": "yaml"}).status_code == 200
    assert api.get("/api/v1/schema/").json() == first
    assert generated == []

    settings.SPECTACULAR_SETTINGS = {**settings.SPECTACULAR_SETTINGS, "VERSION": "1.0.1"}
    again = api.get("/api/v1/schema/").json()
    assert generated == [1]
    assert again["paths"] == first["paths"]


def test_fixed_value_sets_are_enums(schema):
    components = schema["components"]["schemas"]

    def enum_of(prop: dict) -> list:
        if "$ref" in prop:
            return components[prop["$ref"].split("/")[-1]]["enum"]
        return [value for branch in prop["oneOf"] for value in enum_of(branch)]

    assert enum_of(components["SeasonOut"]["properties"]["status"]) == ["scheduled", "running", "closed"]
    assert enum_of(components["MatchSideOut"]["properties"]["answer"]) == ["reported", "confirmed", "disputed", ""]
    unranked = components["StandingOut"]["properties"]["unranked"]["items"]["$ref"].split("/")[-1]
    assert enum_of(components[unranked]["properties"]["code"]) == [
        "provisional",
        "too_few_games",
        "no_game",
        "idle",
        "left",
    ]
