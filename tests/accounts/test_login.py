from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db
URL = reverse("accounts:login")


def login(client, username, password, ip="198.51.100.7"):
    return client.post(URL, {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_login_accepts_any_case_of_username(client, player):
    response = login(client, "ALICE", PASSWORD)

    assert response.status_code == 302
    assert int(client.session["_auth_user_id"]) == player.pk


def test_wrong_password_shows_form_error(client, player):
    response = login(client, "alice", "nope")

    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.text
    assert "_auth_user_id" not in client.session


def test_repeated_failures_for_one_account_are_throttled_from_any_address(client, player, settings):
    limit = settings.AXES_FAILURE_LIMIT
    for attempt in range(limit):
        response = login(client, "Alice", "wrong", ip=f"203.0.113.{attempt + 1}")
        assert response.status_code in (200, 429)

    response = login(client, "alice", PASSWORD, ip="192.0.2.99")

    assert response.status_code == 429
    assert "Too many failed logins" in response.text
    assert "_auth_user_id" not in client.session


def test_repeated_failures_from_one_address_are_throttled_for_any_account(client, player, opponent, settings):
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        login(client, f"nobody{attempt}", "wrong", ip="203.0.113.50")

    response = login(client, "bob", PASSWORD, ip="203.0.113.50")

    assert response.status_code == 429
    # Another address can still log in to an account that was not attacked.
    assert login(client, "bob", PASSWORD, ip="203.0.113.51").status_code == 302


def test_logout_requires_post_and_logs_out(player_client):
    assert player_client.get(reverse("accounts:logout")).status_code == 405

    response = player_client.post(reverse("accounts:logout"))

    assert response.status_code == 302
    assert "_auth_user_id" not in player_client.session


def test_password_change(player_client, player):
    url = reverse("accounts:password_change")
    bad = player_client.post(url, {"old_password": "wrong", "new_password1": "x", "new_password2": "x"})
    assert "Your old password was entered incorrectly." in bad.text

    response = player_client.post(
        url, {"old_password": PASSWORD, "new_password1": "brand-new-secret-9", "new_password2": "brand-new-secret-9"}
    )

    assert response.status_code == 302
    player.refresh_from_db()
    assert player.check_password("brand-new-secret-9")


def test_password_change_needs_login(client):
    response = client.get(reverse("accounts:password_change"))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login"))
