"""The statistics API: win rates per field value, head-to-head records, a player's records in their history."""

from __future__ import annotations

import pytest

from tests.api.conftest import error_of

pytestmark = pytest.mark.django_db


def test_ladder_stats_per_value_with_counts_and_expectations(api, ladder, played):
    body = api.get(f"/api/v1/ladders/{ladder.slug}/stats/", {"field": "tribe"}).json()
    assert body["field"] == {"name": "tribe", "label": "Tribe", "scope": "player"}
    empire = next(row for row in body["values"] if row["value"] == "Empire")
    assert (empire["games"], empire["wins"], empire["losses"], empire["draws"]) == (2, 1, 0, 1)
    assert empire["score"] == 1.5 and empire["score_rate"] == 0.75
    assert 0.5 < empire["expected_rate"] < 0.75  # a coin toss, then alice the favourite


def test_ladder_stats_refuses_a_missing_or_unknown_field_naming_it(api, ladder, played):
    missing = api.get(f"/api/v1/ladders/{ladder.slug}/stats/")
    assert missing.status_code == 400 and "field" in error_of(missing)["fields"]
    unknown = api.get(f"/api/v1/ladders/{ladder.slug}/stats/", {"field": "weather"})
    assert unknown.status_code == 400
    assert error_of(unknown)["code"] == "unknown_field" and "field" in error_of(unknown)["fields"]
    assert api.get("/api/v1/ladders/nowhere/stats/", {"field": "map"}).status_code == 404


def test_versus_gives_the_record_from_the_first_players_side(api, ladder, played):
    body = api.get("/api/v1/players/bob/versus/alice/", {"ladder": ladder.slug}).json()
    assert (body["a"], body["b"], body["games"], body["a_wins"], body["b_wins"], body["draws"]) == (
        "bob",
        "alice",
        2,
        0,
        1,
        1,
    )
    assert [item["a_result"] for item in body["recent"]] == ["draw", "loss"]
    assert 0.0 < body["a_expected"] < 2.0


def test_versus_refuses_a_missing_or_unknown_ladder_and_unknown_players(api, ladder, played):
    missing = api.get("/api/v1/players/bob/versus/alice/")
    assert missing.status_code == 400 and "ladder" in error_of(missing)["fields"]
    unknown = api.get("/api/v1/players/bob/versus/alice/", {"ladder": "nowhere"})
    assert unknown.status_code == 400 and error_of(unknown)["fields"].keys() == {"ladder"}
    assert api.get("/api/v1/players/bob/versus/nobody/", {"ladder": ladder.slug}).status_code == 404


def test_versus_and_stats_are_public_reads_in_the_schema(api):
    paths = api.get("/api/v1/schema/").json()["paths"]
    for path in ("/api/v1/ladders/{slug}/stats/", "/api/v1/players/{a}/versus/{b}/"):
        assert "security" not in paths[path]["get"], path  # no credentials needed


def test_a_players_history_carries_their_record_per_field_value(api, ladder, played):
    body = api.get(f"/api/v1/players/alice/ladders/{ladder.slug}/history/").json()
    records = {item["field"]["name"]: item["values"] for item in body["field_records"]}
    assert [row["value"] for row in records["tribe"]] == ["Empire"]
    assert sorted(row["value"] for row in records["map"]) == ["Crater", "Nile"]
    assert body["count"] == 2
