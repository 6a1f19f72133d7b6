"""Helpers of the API tests; the cast and its API clients are in tests/conftest.py."""

from __future__ import annotations

import pytest

from ladder.models import Match
from matchmaking.models import EntryStatus, QueueEntry
from matchmaking.services import queue_join


def report_body(ladder, a="alice", b="bob", **extra):
    """A 1 v 1 report body: ``a`` beat ``b``."""
    return {
        "ladder": ladder.slug,
        "sides": [{"players": [a], "placement": 1}, {"players": [b], "placement": 2}],
        **extra,
    }


def error_of(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "fields"}, body
    return body["error"]


# A best-of-N series through the API (tests/api/test_series_api.py, test_series_fields_api.py).


def _games(client, match_id: int, body):
    return client.post(f"/api/v1/matches/{match_id}/games/", body, format="json")


@pytest.fixture
def clients(client_for, player, opponent):
    return client_for(player), client_for(opponent)


@pytest.fixture
def scheduled(ladder, player, opponent, clients) -> int:
    """A paired match both players pressed Ready for."""
    queue_join(ladder=ladder, player=player)
    queue_join(ladder=ladder, player=opponent)
    match_id = QueueEntry.objects.get(ladder=ladder, player=player, status=EntryStatus.MATCHED).match_id
    assert match_id is not None
    for client in clients:
        assert client.post(f"/api/v1/matches/{match_id}/ready/", {}, format="json").status_code == 200
    return match_id


def _side(match_id: int, user) -> int:
    return Match.objects.get(pk=match_id).participants.get(player=user).side.index
