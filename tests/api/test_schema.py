from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.validation import validate_schema
from rest_framework import serializers

from api import serializers as api_serializers
from api.errors import SERVICE_STATUS
from api.schema import CONFLICTS
from api.serializers import StrictSerializer
from ladder.models import MAX_PLAYERS_PER_MATCH

pytestmark = pytest.mark.django_db


def _api_routes() -> set[str]:
    """Every route under /api/v1/ from the URLconf, as OpenAPI paths."""
    import re

    (api,) = [p for p in get_resolver().url_patterns if isinstance(p, URLResolver) and str(p.pattern) == "api/v1/"]
    routes = set()
    patterns = [("", pattern) for pattern in api.url_patterns]
    while patterns:  # an app's own routes module (api/urls_stats.py) is included at the root
        prefix, pattern = patterns.pop()
        if isinstance(pattern, URLResolver):
            patterns.extend((prefix + str(pattern.pattern), inner) for inner in pattern.url_patterns)
            continue
        assert isinstance(pattern, URLPattern)
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", prefix + str(pattern.pattern)).replace("{pk}", "{id}")
        routes.add("/api/v1/" + route)
    return routes - {"/api/v1/schema/"}


def test_schema_is_valid_openapi_and_lists_every_endpoint(api):
    response = api.get("/api/v1/schema/")
    assert response.status_code == 200
    schema = response.json()
    validate_schema(schema)
    assert set(schema["paths"]) == _api_routes()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "200" in operation["responses"] or "201" in operation["responses"], (path, method)
            assert "429" in operation["responses"], (path, method)


def test_docs_are_served_from_the_site(client):
    for url in ("/api/docs/", "/api/docs/redoc/"):
        page = client.get(url)
        assert page.status_code == 200
        assert b"cdn" not in page.content.lower() and b"unpkg" not in page.content.lower()
        assert b"/static/drf_spectacular_sidecar/" in page.content


# What the schema promises (docs/api.md, "What the schema promises") --------------------------


@pytest.fixture
def schema(api) -> dict:
    return api.get("/api/v1/schema/").json()


def _operations(schema: dict):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            yield path, method, operation


def _strict_inputs() -> list[type[StrictSerializer]]:
    return [
        value
        for value in vars(api_serializers).values()
        if isinstance(value, type) and issubclass(value, StrictSerializer) and value is not StrictSerializer
    ]


def test_every_request_body_refuses_unknown_fields(schema):
    components = schema["components"]["schemas"]
    bodies = [name for name in components if name.endswith("Request")]
    assert {"ReportInRequest", "SideInRequest", "NotificationReadInRequest", "CorrectInRequest"} <= set(bodies)
    for name in bodies:
        # A body of several shapes (NotificationReadIn: ids, or all) is one of strict bodies.
        branches = [ref["$ref"].split("/")[-1] for ref in components[name].get("oneOf", [])]
        for strict in branches or [name]:
            assert components[strict]["additionalProperties"] is False, name
            assert "description" not in components[strict], name  # not StrictSerializer's docstring
    for path, method, operation in _operations(schema):
        if "requestBody" in operation:
            ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert ref.removeprefix("#/components/schemas/") in bodies, (path, method)


def test_lists_show_their_limits(schema):
    components = schema["components"]["schemas"]
    ids = components["NotificationReadIdsInRequest"]["properties"]["ids"]
    assert (ids["minItems"], ids["maxItems"]) == (1, 200)
    sides = components["ReportInRequest"]["properties"]["sides"]
    assert (sides["minItems"], sides["maxItems"]) == (2, MAX_PLAYERS_PER_MATCH)
    players = components["SideInRequest"]["properties"]["players"]
    assert (players["minItems"], players["maxItems"]) == (1, MAX_PLAYERS_PER_MATCH)
    assert players["items"]["maxLength"] == 30


def _limits(field) -> dict[str, object]:
    """The JSON Schema keywords of the limits a serializer field enforces."""
    pairs = {
        "maxLength": getattr(field, "max_length", None) if isinstance(field, serializers.CharField) else None,
        "minimum": getattr(field, "min_value", None),
        "maximum": getattr(field, "max_value", None),
        "minItems": getattr(field, "min_length", None) if not isinstance(field, serializers.CharField) else None,
        "maxItems": getattr(field, "max_length", None) if not isinstance(field, serializers.CharField) else None,
    }
    return {keyword: limit for keyword, limit in pairs.items() if limit is not None}


def test_every_limit_a_serializer_enforces_is_in_the_schema(schema):
    """Bodies by their components, query serializers by the parameters they explode into."""
    components = schema["components"]["schemas"]
    parameters = {
        (path, parameter["name"]): parameter["schema"]
        for path, _, operation in _operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query"
    }
    checked = 0
    for serializer_class in _strict_inputs():
        component = components.get(f"{serializer_class.__name__}Request")
        shapes = [components[ref["$ref"].split("/")[-1]] for ref in (component or {}).get("oneOf", [])]
        for name, field in serializer_class().fields.items():
            if shapes:  # a body of several shapes: the field wherever one declares it
                places = [shape["properties"][name] for shape in shapes if name in shape["properties"]]
            elif component is not None:
                places = [component["properties"][name]]
            else:
                places = [found for (_, param), found in parameters.items() if param == name]
            for place in places:
                for keyword, limit in _limits(field).items():
                    assert place.get(keyword) == limit, (serializer_class.__name__, name, keyword)
                    checked += 1
    assert checked > 40


AUTH_REQUIRED_READS = {
    "me",
    "me_export",
    "me_fair_play",
    "notifications_list",
    "queue_poll",
    "party_retrieve",
    "replay_jobs_retrieve",
}


def test_public_reads_declare_no_security_and_everything_else_requires_a_token(schema):
    """A public read lists no security requirement (generators read ``[{}, …]`` as required)."""
    assert "security" not in schema
    token_only = [{"tokenAuth": []}, {"cookieAuth": []}]
    for path, method, operation in _operations(schema):
        public = method == "get" and operation["operationId"] not in AUTH_REQUIRED_READS
        assert operation.get("security") == (None if public else token_only), (path, method)


def test_the_declared_auth_is_what_an_anonymous_client_gets(schema, api, ladder, player):
    """Each operation called without credentials: 401 exactly where the schema requires them."""
    values = {
        "slug": ladder.slug,
        "username": player.username,
        "id": "1",
        "party_id": "1",
        "date": "2026-01-01",
        "tournament": "cup",
    }
    for path, method, operation in _operations(schema):
        url = path
        for name, value in values.items():
            url = url.replace("{" + name + "}", value)
        response = getattr(api, method)(url, {}, format="json") if method != "get" else api.get(url)
        required = "security" in operation
        assert (response.status_code == 401) == required, (path, method, response.status_code)


def test_an_empty_optional_query_parameter_counts_as_not_given(schema, api, ladder):
    for path, _, operation in _operations(schema):
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query":
                optional = not parameter.get("required", False)
                assert parameter.get("allowEmptyValue", False) is optional, (path, parameter)
    assert api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/", {"bots": "", "page": ""}).status_code == 200


def test_a_body_the_api_refuses_empty_is_required(schema, client_for, player):
    read = schema["paths"]["/api/v1/notifications/read/"]["post"]
    assert read["requestBody"]["required"] is True
    assert client_for(player).post("/api/v1/notifications/read/").status_code == 400
    assert "required" not in schema["paths"]["/api/v1/matches/{id}/dispute/"]["post"]["requestBody"]


SITE_ONLY_CONFLICTS = {"cannot_confirm"}  # a moderator's confirmation on the match page; no API operation


def test_every_conflict_an_operation_can_give_is_declared_and_documented(schema):
    declared = {operation["operationId"] for _, _, operation in _operations(schema) if "409" in operation["responses"]}
    assert declared == set(CONFLICTS)
    conflict_codes = {code for code, status in SERVICE_STATUS.items() if status == 409}
    assert set().union(*CONFLICTS.values()) == (conflict_codes - SITE_ONLY_CONFLICTS) | {"idempotency_key_reused"}
    docs = (settings.BASE_DIR / "docs" / "api.md").read_text()
    for code in set().union(*CONFLICTS.values()):
        assert f"`{code}`" in docs, code


def test_leaving_twice_is_a_conflict(client_for, player, ladder):
    client = client_for(player)
    url = f"/api/v1/ladders/{ladder.slug}/membership/"
    assert client.delete(url).status_code == 200
    again = client.delete(url)
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_joined"


def test_a_body_that_is_not_an_object_is_refused(client_for, player, opponent, ladder):
    """The schema says the body is an object; ``null``, ``[]`` or ``0`` once read as an empty one (201)."""
    client = client_for(player)
    for url in (f"/api/v1/ladders/{ladder.slug}/queue/", f"/api/v1/ladders/{ladder.slug}/membership/"):
        for body in ("null", "[]", "0", "false"):
            response = client.post(url, body, content_type="application/json")
            assert response.status_code == 400, (url, body, response.content)
