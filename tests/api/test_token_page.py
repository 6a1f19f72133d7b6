"""The token page: a new token's secret is in the answer to the form and nowhere else."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings
from django.contrib.sessions.models import Session

from api.models import ApiToken
from api.services import token_hash

pytestmark = pytest.mark.django_db
URL = "/accounts/tokens/"
ALREADY_SENT = "No token was created: this form was already sent (the page was reloaded?) or is out of date"


def form_key(client) -> str:
    return client.get(URL).context["form_key"]


def create(client, name="my bot", **extra):
    return client.post(URL, {"name": name, "form_key": form_key(client), **extra})


def cached_values() -> list[bytes]:
    """Every value in the cache's Redis database (sessions are cached there too)."""
    server = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    return [server.dump(key) or b"" for key in server.scan_iter()]


def test_token_page_creates_shows_once_and_revokes(player_client, player):
    page = create(player_client, read_only="on")

    assert page.status_code == 200
    secret = page.context["secret"]
    assert secret.encode() in page.content
    token = ApiToken.objects.get(user=player)
    assert token.read_only and token.name == "my bot" and page.context["created"] == token
    assert token.key_hash == token_hash(secret)
    again = player_client.get(URL)
    assert secret.encode() not in again.content
    player_client.post(f"{URL}{token.pk}/revoke/")
    token.refresh_from_db()
    assert token.is_revoked


def test_new_secret_is_not_kept_in_the_session_or_the_cache(player_client, player):
    secret = create(player_client).context["secret"]

    for session in Session.objects.all():
        assert secret not in str(session.get_decoded())
    assert secret not in str(dict(player_client.session))
    assert not any(secret.encode() in value for value in cached_values())


def test_pages_of_the_token_page_are_never_stored(player_client):
    created = create(player_client)

    assert "no-store" in created["Cache-Control"]
    assert "no-store" in player_client.get(URL)["Cache-Control"]


def test_sending_the_form_again_creates_no_second_token(player_client, player):
    key = form_key(player_client)
    first = player_client.post(URL, {"name": "my bot", "form_key": key})

    again = player_client.post(URL, {"name": "my bot", "form_key": key})  # the browser's reload of the answer

    assert again.status_code == 409
    assert ALREADY_SENT in again.text
    assert first.context["secret"].encode() not in again.content
    assert ApiToken.objects.filter(user=player).count() == 1


def test_a_form_without_its_key_creates_nothing(player_client, player):
    response = player_client.post(URL, {"name": "my bot"})

    assert response.status_code == 409
    assert ALREADY_SENT in response.text
    assert not ApiToken.objects.filter(user=player).exists()


def test_token_page_refuses_a_nameless_token_and_offers_the_form_again(player_client, player):
    refused = create(player_client, name=" ")

    assert refused.status_code == 400
    assert refused.context.get("secret") is None
    retried = player_client.post(URL, {"name": "my bot", "form_key": refused.context["form_key"]})
    assert retried.status_code == 200 and ApiToken.objects.filter(user=player).count() == 1


def test_token_page_needs_login(client):
    response = client.get(URL)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
