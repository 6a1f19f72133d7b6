"""The one error shape, for every kind of bad request."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.api.conftest import error_of

pytestmark = pytest.mark.django_db


def test_malformed_json_is_400(client_for, player):
    response = client_for(player).post("/api/v1/matches/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "malformed_json"


def test_body_over_64_kb_is_400(client_for, player, ladder):
    body = '{"ladder": "' + "x" * (64 * 1024) + '"}'
    response = client_for(player).post("/api/v1/matches/", body, content_type="application/json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "body_too_large"


def test_json_array_instead_of_object_is_400(client_for, player):
    response = client_for(player).post("/api/v1/matches/", "[1, 2]", content_type="application/json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid"


def test_form_bodies_are_415(client_for, player):
    response = client_for(player).post("/api/v1/matches/", {"ladder": "x"})
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"


def test_html_accept_is_406(api, ladder):
    response = api.get("/api/v1/ladders/", HTTP_ACCEPT="text/html")
    assert response.status_code == 406


def test_unknown_endpoint_is_json_404(api):
    response = api.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_unknown_ladder_is_404(api):
    response = api.get("/api/v1/ladders/nope/")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_wrong_method_is_405(client_for, player):
    response = client_for(player).delete("/api/v1/matches/")
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


def test_unknown_query_parameter_is_400(api):
    response = api.get("/api/v1/ladders/", {"sort": "name"})
    assert response.status_code == 400
    assert error_of(response)["fields"] == {"sort": ["Unknown field."]}


def test_out_of_range_query_is_400(api, ladder):
    response = api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/", {"page_size": 1000})
    assert response.status_code == 400
    assert "page_size" in error_of(response)["fields"]


@override_settings(API_THROTTLE_RATES={"anon": "3/minute", "token": "2/minute", "user": None})
def test_anonymous_requests_are_throttled_per_address(api, ladder):
    for _ in range(3):
        assert api.get("/api/v1/ladders/").status_code == 200
    response = api.get("/api/v1/ladders/")
    assert response.status_code == 429
    assert error_of(response)["code"] == "throttled"
    assert int(response["Retry-After"]) > 0
    assert api.get("/api/v1/ladders/", REMOTE_ADDR="10.0.0.9").status_code == 200


@override_settings(API_THROTTLE_RATES={"anon": "100/minute", "token": "2/minute", "user": None})
def test_tokens_are_throttled_each_on_its_own(client_for, player):
    first, second = client_for(player), client_for(player)
    assert first.get("/api/v1/me/").status_code == 200
    assert first.get("/api/v1/me/").status_code == 200
    assert first.get("/api/v1/me/").status_code == 429
    assert second.get("/api/v1/me/").status_code == 200


@override_settings(API_THROTTLE_RATES={"anon": "100/minute", "token": None, "user": None, "search": "2/minute"})
def test_leaderboard_searches_that_must_be_ranked_have_their_own_limit(api, ladder):
    """Only a search (or bot filter) computed anew counts: cached ones and plain pages are free."""
    url = f"/api/v1/ladders/{ladder.slug}/leaderboard/"
    assert api.get(url, {"q": "al"}).status_code == 200
    assert api.get(url, {"bots": "only"}).status_code == 200
    for _ in range(3):
        assert api.get(url, {"q": "al"}).status_code == 200  # cached
        assert api.get(url).status_code == 200  # a plain page
    response = api.get(url, {"q": "bo"})
    assert response.status_code == 429
    assert error_of(response)["code"] == "throttled"
    assert int(response["Retry-After"]) > 0
    assert api.get(url, {"q": "bo"}, REMOTE_ADDR="10.0.0.9").status_code == 200  # per client


def test_a_malformed_search_limit_is_refused_at_start():
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "API_THROTTLE_SEARCH": "lots"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0 and "API_THROTTLE_SEARCH must look like 60/minute" in result.stderr
