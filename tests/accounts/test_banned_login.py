"""A banned account is told it is banned when it signs in, but only with the right password."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.forms import ACCOUNT_BANNED
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db
URL = reverse("accounts:login")
WRONG = "Please enter a correct username and password"


def login(client, username, password, ip="198.51.100.7"):
    return client.post(URL, {"username": username, "password": password}, REMOTE_ADDR=ip)


@pytest.fixture
def banned(player):
    player.is_active = False
    player.save(update_fields=["is_active"])
    return player


def test_banned_account_with_the_right_password_is_told_it_is_banned(client, banned):
    response = login(client, "Alice", PASSWORD)

    assert response.status_code == 200
    assert "This account is banned (deactivated) by a moderator" in response.text
    assert WRONG not in response.text
    assert "_auth_user_id" not in client.session


def test_banned_account_with_a_wrong_password_reads_as_a_wrong_password(client, banned):
    response = login(client, "alice", "nope")

    assert WRONG in response.text
    assert ACCOUNT_BANNED not in response.text


def test_banned_account_attempts_still_count_towards_the_lockout(client, banned, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        login(client, "alice", PASSWORD, ip="203.0.113.1")

    locked = login(client, "alice", PASSWORD, ip="203.0.113.1")

    assert locked.status_code == 429
    assert "Too many failed logins" in locked.text
    assert "banned" not in locked.text


def test_an_active_account_still_signs_in(client, player):
    assert login(client, "alice", PASSWORD).status_code == 302
