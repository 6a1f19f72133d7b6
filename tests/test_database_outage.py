"""PostgreSQL down: every request answers 503 with ``Retry-After``, never a bare 500.

The site's connection is pointed at a loopback port where nothing listens, as a stopped or
restarting PostgreSQL looks to a client (connections refused), for the length of the test;
then it is pointed back at the test database.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from api.services import token_create
from core.middleware import RETRY_AFTER_SECONDS, UNAVAILABLE_MESSAGE

pytestmark = pytest.mark.django_db(transaction=True)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def database_down() -> Iterator[None]:
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=closed_port())
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(saved)


@pytest.fixture
def signed_in(player) -> Client:
    client = Client()
    client.force_login(player)  # the session is in Redis as well: only the user is read from PostgreSQL
    return client


@pytest.fixture
def bot(player) -> APIClient:
    _, secret = token_create(user=player, name="bot", read_only=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_pages_answer_503_with_retry_after_while_the_database_is_down(ladder, signed_in, database_down):
    for client in (Client(), signed_in):
        for url in (reverse("home"), reverse("ladder:detail", args=[ladder.slug])):
            page = client.get(url)

            assert page.status_code == 503, (url, page.status_code)
            assert page.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
            assert "Briefly unavailable" in page.text
            assert "Log in" in page.text  # the site's frame, drawn without reading the user


def test_the_api_answers_503_in_its_error_shape_while_the_database_is_down(ladder, bot, database_down):
    for client in (APIClient(), bot):
        for url in ("/api/v1/ladders/", f"/api/v1/ladders/{ladder.slug}/leaderboard/"):
            answer = client.get(url)

            assert answer.status_code == 503, (url, answer.status_code)
            assert answer.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
            assert answer.json() == {"error": {"code": "unavailable", "message": UNAVAILABLE_MESSAGE, "fields": {}}}


def test_forms_answer_503_while_the_database_is_down(player, signed_in, database_down):
    login = Client().post(reverse("accounts:login"), {"username": "alice", "password": "whatever"})
    logout = signed_in.post(reverse("accounts:logout"))

    assert (login.status_code, logout.status_code) == (503, 503)
    assert login.headers["Retry-After"] == logout.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)


def test_readiness_fails_naming_the_database_while_it_is_down(database_down):
    response = Client().get("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    # What needs the database is not checked; Redis still is.
    assert set(body["checks"]) == {"database", "redis"}
    assert body["checks"]["database"]["ok"] is False
    assert body["checks"]["database"]["detail"] == "the database did not answer (OperationalError)"
    assert body["checks"]["redis"]["ok"] is True
    assert "127.0.0.1" not in response.text and "postgres" not in response.text  # no address, no user


def test_liveness_does_not_need_the_database(database_down):
    assert Client().get("/healthz").status_code == 200
