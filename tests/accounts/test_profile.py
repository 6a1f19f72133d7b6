from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_profile_lists_ladders_with_current_rating(client, player, ladder):
    response = client.get(reverse("accounts:profile", args=["alice"]))

    assert response.status_code == 200
    assert ladder.name in response.text
    assert "provisional" in response.text


def test_profile_of_unknown_player_is_a_404_page(client):
    response = client.get(reverse("accounts:profile", args=["ghost"]))

    assert response.status_code == 404
    assert "Page not found" in response.text


def test_profile_of_deactivated_player_is_a_404(client, player):
    player.is_active = False
    player.save()

    assert client.get(reverse("accounts:profile", args=["alice"])).status_code == 404


def test_profile_in_other_case_redirects_to_canonical_address(client, player):
    response = client.get(reverse("accounts:profile", args=["ALICE"]))

    assert response.status_code == 301
    assert response["Location"] == reverse("accounts:profile", args=["alice"])


def test_settings_page_updates_profile(player_client, player):
    response = player_client.post(reverse("accounts:settings"), {"email": "a@example.org", "about": "I like chess."})

    assert response.status_code == 302
    player.refresh_from_db()
    assert player.about == "I like chess."


def test_settings_rejects_bad_email(player_client, player):
    response = player_client.post(reverse("accounts:settings"), {"email": "not-an-email", "about": ""})

    assert response.status_code == 200
    assert "Enter a valid email address." in response.text
    player.refresh_from_db()
    assert player.email == "alice@example.org"


def test_settings_needs_login(client):
    assert client.get(reverse("accounts:settings")).status_code == 302
