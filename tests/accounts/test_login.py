from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.forms import LOGIN_INVALID
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
    assert LOGIN_INVALID in response.text
    assert "Usernames are not case-sensitive; passwords are." in response.text
    assert "_auth_user_id" not in client.session


def fail(client, username, times, ip="198.51.100.7"):
    for _ in range(times):
        assert login(client, username, "wrong", ip=ip).status_code in (200, 429)


def test_failures_lock_the_username_from_that_address_only(client, player, opponent, settings):
    fail(client, "Alice", settings.AXES_FAILURE_LIMIT, ip="203.0.113.1")

    locked = login(client, "alice", PASSWORD, ip="203.0.113.1")

    assert locked.status_code == 429
    assert "Too many failed logins" in locked.text
    assert "paused for 15\xa0minutes" in locked.text
    assert "_auth_user_id" not in client.session
    # The owner logs in from anywhere else, and others from the same address.
    assert login(client, "bob", PASSWORD, ip="203.0.113.1").status_code == 302
    client.logout()
    assert login(client, "alice", PASSWORD, ip="192.0.2.99").status_code == 302


def test_failures_spread_over_addresses_lock_nobody(client, player, settings):
    for attempt in range(settings.AXES_FAILURE_LIMIT * 2):
        login(client, "alice", "wrong", ip=f"203.0.113.{attempt + 1}")

    assert login(client, "alice", PASSWORD, ip="192.0.2.99").status_code == 302


def test_failures_below_the_limit_do_not_lock(client, player, settings):
    fail(client, "alice", settings.AXES_FAILURE_LIMIT - 1)

    assert login(client, "alice", PASSWORD).status_code == 302


def test_address_limit_locks_the_address_for_every_username(client, player, opponent, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 8
    for attempt in range(8):
        login(client, f"nobody{attempt}", "wrong", ip="203.0.113.50")

    locked = login(client, "bob", PASSWORD, ip="203.0.113.50")

    assert locked.status_code == 429
    assert "After 8 failed logins from your address, for any accounts" in locked.text
    # Another address can still log in to the same account.
    assert login(client, "bob", PASSWORD, ip="203.0.113.51").status_code == 302


def test_address_below_its_limit_is_not_locked_by_many_usernames(client, opponent, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 8
    for attempt in range(7):
        login(client, f"nobody{attempt}", "wrong", ip="203.0.113.50")

    assert login(client, "bob", PASSWORD, ip="203.0.113.50").status_code == 302


def test_own_login_does_not_reset_the_address_count(client, player, opponent, settings):
    """Logging in to one's own account clears that account's failures, not the address's."""
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 6
    for attempt in range(5):
        login(client, f"victim{attempt}", "wrong", ip="203.0.113.60")
    assert login(client, "alice", PASSWORD, ip="203.0.113.60").status_code == 302
    client.logout()

    login(client, "victim-last", "wrong", ip="203.0.113.60")

    assert login(client, "bob", PASSWORD, ip="203.0.113.60").status_code == 429


def test_lockout_sends_retry_after_equal_to_the_cool_off(client, player, settings):
    fail(client, "alice", settings.AXES_FAILURE_LIMIT)

    locked = login(client, "alice", PASSWORD)

    assert locked.status_code == 429
    assert locked["Retry-After"] == str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    assert "Try again at" in locked.text


def test_forwarded_address_is_ignored_without_a_proxy_count(client, player, settings):
    settings.PROXY_COUNT = 0
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            URL,
            {"username": "alice", "password": "wrong"},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR=f"1.2.3.{attempt}",
        )

    # Every attempt counted for 10.0.0.1, whatever the header said.
    assert login(client, "alice", PASSWORD, ip="10.0.0.1").status_code == 429


def test_forwarded_address_is_the_client_behind_the_proxy_count(client, player, settings):
    settings.PROXY_COUNT = 1
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            URL,
            {"username": "alice", "password": "wrong"},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7",  # the left entry was written by the client
        )

    def through_proxy(client_ip):
        return client.post(
            URL, {"username": "alice", "password": PASSWORD}, REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=client_ip
        )

    assert through_proxy("203.0.113.7").status_code == 429
    assert through_proxy("6.6.6.6, 203.0.113.8").status_code == 302


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
