"""The statistics page, the head-to-head page, and the statistics on the match and player pages."""

from __future__ import annotations

import pytest

from stats.models import FieldValueStat

pytestmark = pytest.mark.django_db


def test_the_stats_page_shows_each_value_with_its_record_and_expectation(client, ladder, played):
    page = client.get(f"/ladders/{ladder.slug}/stats/?field=tribe")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Empire" in text and "Frisians" in text
    assert "1–0–1" in text and "0–1–1" in text  # W–L–D per tribe
    assert "What the columns mean" in text and "Expected" in text
    assert '<option value="map">Map</option>' in text and '<option value="tribe" selected>' in text


def test_the_stats_page_counts_a_map_once_per_game_from_its_favourite(client, ladder, played, details):
    crater = FieldValueStat.objects.get(field=details[0], value="Crater")
    assert crater.games == 1  # not once per player
    page = client.get(f"/ladders/{ladder.slug}/stats/")  # the first field: the map
    assert "favourite" in page.content.decode() and "Crater" in page.content.decode()


def test_the_stats_page_refuses_an_unknown_field_and_explains_a_ladder_without_fields(client, ladder):
    assert client.get(f"/ladders/{ladder.slug}/stats/?field=weather").status_code == 404
    page = client.get(f"/ladders/{ladder.slug}/stats/")
    assert page.status_code == 200 and "No game details to count" in page.content.decode()
    assert client.get("/ladders/nowhere/stats/").status_code == 404


def test_the_ladder_page_links_the_stats_page(client, ladder):
    assert f'href="/ladders/{ladder.slug}/stats/"' in client.get(ladder.get_absolute_url()).content.decode()


def test_the_versus_page_shows_the_record_and_the_recent_games(client, ladder, played, player, opponent):
    page = client.get(f"/ladders/{ladder.slug}/versus/alice/bob/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "alice v bob" in text and f"Match {played[0].pk}" in text and f"Match {played[1].pk}" in text
    assert "<dt>wins</dt><dd>1</dd>" in text and "<dt>draws</dt><dd>1</dd>" in text
    assert "<dt>scored</dt><dd>75%</dd>" in text
    other = client.get(f"/ladders/{ladder.slug}/versus/bob/alice/").content.decode()
    assert "<dt>wins</dt><dd>0</dd>" in other and "<dt>losses</dt><dd>1</dd>" in other
    assert client.get(f"/ladders/{ladder.slug}/versus/ALICE/bob/").status_code == 301
    assert client.get(f"/ladders/{ladder.slug}/versus/alice/nobody/").status_code == 404
    assert client.get(f"/ladders/{ladder.slug}/versus/alice/alice/").status_code == 404


def test_the_match_page_shows_the_players_head_to_head(client, played):
    text = client.get(played[0].get_absolute_url()).content.decode()
    assert "Head to head" in text and "<strong>1–0–1</strong>" in text


def test_the_player_page_shows_their_record_per_field_value(client, ladder, played):
    text = client.get(f"/ladders/{ladder.slug}/players/bob/").content.decode()
    assert "Record by game detail" in text and "Frisians" in text and "Crater" in text
