"""``/robots.txt``: public pages open to crawlers; the admin, the API and account pages not."""

from __future__ import annotations

from urllib.robotparser import RobotFileParser

import pytest

pytestmark = pytest.mark.django_db


def parsed(text: str) -> RobotFileParser:
    robots = RobotFileParser()
    robots.parse(text.splitlines())
    return robots


def test_robots_txt_allows_public_pages_and_disallows_private_ones(client):
    response = client.get("/robots.txt")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    robots = parsed(response.text)
    for public in ("/", "/ladders/chess/", "/ladders/chess/players/alice/", "/players/alice/", "/help/"):
        assert robots.can_fetch("*", public), public
    for private in ("/admin/", "/api/v1/schema/", "/api/docs/", "/accounts/settings/", "/notifications/"):
        assert not robots.can_fetch("*", private), private


def test_robots_txt_refuses_a_post(client):
    assert client.post("/robots.txt").status_code == 405
