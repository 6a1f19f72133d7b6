"""A best-of-N series through the API: each game reported with ``POST matches/<id>/games/``
(docs/rules.md §13, "Series"; docs/api.md)."""

from __future__ import annotations

import pytest

from tests.api.conftest import _games, _side, error_of

pytestmark = pytest.mark.django_db


@pytest.mark.ladder(best_of=3)
def test_a_series_reported_game_by_game_ends_pending_with_its_score(clients, scheduled, player, api):
    alice, bob = clients
    mine = _side(scheduled, player)
    assert api.get(f"/api/v1/matches/{scheduled}/").json()["series"] == {
        "best_of": 3,
        "games": [],
        "wins": [0, 0],
        "decided": False,
    }

    first = _games(alice, scheduled, {"winner_side": mine})
    assert first.status_code == 200, first.content
    body = first.json()
    assert body["status"] == "scheduled"
    assert body["series"]["games"] == [{"number": 1, "winner_side": mine, "match": None}]
    assert body["series"]["decided"] is False

    second = _games(bob, scheduled, {"winner_side": mine}).json()
    assert second["status"] == "pending"
    assert second["series"]["wins"][mine] == 2 and second["series"]["decided"] is True

    over = _games(alice, scheduled, {"winner_side": mine})
    assert over.status_code == 409 and error_of(over)["code"] == "not_scheduled"


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_each_game_rated_names_its_own_match(clients, scheduled, player):
    alice, bob = clients
    body = _games(alice, scheduled, {"winner_side": 0}).json()
    game = body["series"]["games"][0]["match"]
    assert game is not None and game != scheduled
    own = bob.get(f"/api/v1/matches/{game}/").json()
    assert own["status"] == "pending" and own["series"] is None  # a game of a series is no series itself
    body = _games(alice, scheduled, {"winner_side": 0}).json()
    assert (body["status"], body["cancel_reason"]) == ("cancelled", "series")
    again = _games(alice, scheduled, {"winner_side": 1})
    assert again.status_code == 409


def test_a_ladder_of_single_games_has_no_series(clients, scheduled, api):
    assert api.get(f"/api/v1/matches/{scheduled}/").json()["series"] is None
    refused = _games(clients[0], scheduled, {"winner_side": 0})
    assert refused.status_code == 409 and error_of(refused)["code"] == "not_a_series"


@pytest.mark.ladder(best_of=3, allow_draws=False)
def test_the_body_is_strict_and_a_draw_needs_draws(clients, scheduled):
    alice = clients[0]
    for body in ({}, {"winner_side": 2}, {"winner_side": "x"}, {"winner_side": 0, "extra": 1}, {"winner_side": True}):
        response = _games(alice, scheduled, body)
        assert response.status_code == 400, (body, response.content)
    draw = _games(alice, scheduled, {"winner_side": None})
    assert draw.status_code == 400 and error_of(draw)["code"] == "draws_not_allowed"


@pytest.mark.ladder(best_of=3)
def test_only_its_players_report_a_game(client_for, outsider, scheduled):
    refused = _games(client_for(outsider), scheduled, {"winner_side": 0})
    assert refused.status_code == 403 and error_of(refused)["code"] == "not_participant"
