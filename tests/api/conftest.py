"""The API cast: each user has a token; ``api`` is a client that sends one."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from api.services import token_create
from tests.factories import UserFactory, member


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def client_for() -> Callable[..., APIClient]:
    """A client authenticated by a new token of ``user`` (read-only if asked)."""

    def make(user, *, read_only: bool = False, keyword: str = "Bearer") -> APIClient:
        _, secret = token_create(user=user, name="test", read_only=read_only)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"{keyword} {secret}")
        return client

    return make


@pytest.fixture
def members(ladder):
    """alice and bob, members of the ladder for long enough to report any recent game."""
    return member(ladder, "alice"), member(ladder, "bob")


@pytest.fixture
def bot(db, ladder):
    return member(ladder, "robo", is_bot=True)


@pytest.fixture
def trusted(db, ladder):
    server = UserFactory(username="gameserver", is_bot=True)
    ladder.trusted_reporters.add(server)
    return server


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


@pytest.fixture(params=["prepared", "orm"])
def lookup_path(request, monkeypatch):
    """The API's hand-written statements on PostgreSQL, or (``orm``) the ORM path of other databases."""
    if request.param == "orm":
        from core import db

        monkeypatch.setattr(db, "_orm_forced", True)
    return request.param
