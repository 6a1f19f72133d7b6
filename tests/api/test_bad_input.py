"""Bad input to the API is a 4xx in the API's error shape, never a 500 or an HTML page (issue 12, item 8)."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from api.parsers import MAX_DEPTH, TOO_DEEP, TOO_LARGE, json_depth
from core.bad_input import NUL_IN_ADDRESS, NUL_IN_FIELD
from ladder.models import Match
from tests.api.conftest import error_of, report_body

pytestmark = pytest.mark.django_db
TOO_BIG = "99999999999999999999"  # past 2⁶³, PostgreSQL's bigint


@pytest.fixture
def player_api(client_for, player, opponent):
    """An API client with `player`'s token."""
    return client_for(player)


def test_json_nested_a_thousand_deep_is_a_400_naming_the_nesting(player_api):
    body = "[" * 1000 + "]" * 1000  # 2 KB: Python's decoder would recurse past its limit

    response = player_api.post("/api/v1/matches/", body, content_type="application/json")

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "too_deep"
    assert error["message"] == TOO_DEEP % MAX_DEPTH


def test_nested_objects_are_refused_before_any_view_reads_them(player_api, ladder):
    body = '{"a": ' * 1000 + "1" + "}" * 1000

    response = player_api.post(f"/api/v1/ladders/{ladder.slug}/queue/", body, content_type="application/json")

    assert response.status_code == 400 and error_of(response)["code"] == "too_deep"


def test_a_body_over_djangos_upload_limit_gets_the_apis_json_error(player_api, ladder):
    body = json.dumps({**report_body(ladder), "note": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})

    response = player_api.post("/api/v1/matches/", body, content_type="application/json")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    error = error_of(response)
    assert error["code"] == "body_too_large"
    assert error["message"] == TOO_LARGE % settings.API_MAX_BODY_BYTES
    assert not Match.objects.exists()


def test_nul_in_an_api_address_is_a_400_in_the_error_shape(api):
    response = api.get("/api/v1/players/al%00ice/")

    assert response.status_code == 400
    assert error_of(response) == {"code": "null_characters_not_allowed", "message": NUL_IN_ADDRESS, "fields": {}}


def test_nul_in_a_query_parameter_is_a_400_naming_it(api, ladder):
    response = api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/", {"q": "a\x00"})

    assert response.status_code == 400
    message = NUL_IN_FIELD % {"field": "q"}
    assert error_of(response) == {"code": "null_characters_not_allowed", "message": message, "fields": {"q": [message]}}


@pytest.mark.parametrize("params", [{"q": "ali"}, {"bots": "hide"}])
def test_a_search_page_past_bigint_is_the_last_page(api, ladder, player, opponent, params):
    response = api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/", {**params, "page": TOO_BIG})

    assert response.status_code == 200
    assert response.json()["count"] >= 1 and response.json()["results"]


def test_a_list_page_past_the_last_is_a_404_naming_the_page(api, ladder):
    response = api.get("/api/v1/ladders/", {"page": TOO_BIG})

    assert response.status_code == 404
    assert error_of(response)["message"] == f"There is no page {TOO_BIG}: That page contains no results."


@pytest.mark.parametrize(
    ("raw", "depth"),
    [
        (b"1", 0),
        (b'{"sides": [{"players": ["a"]}]}', 4),
        (b'{"a": "[[[[{{{{", "b": "\\"[[["}', 1),  # brackets in strings, escaped quotes
        (b'["\\\\", ["x"]]', 2),  # an escaped backslash ends before the quote
        (b'[[[["' + b"\\" * 5000, 4),  # an unterminated string: counted, then the decoder refuses it
    ],
)
def test_json_depth_counts_brackets_outside_strings(raw, depth):
    assert json_depth(raw) == depth
