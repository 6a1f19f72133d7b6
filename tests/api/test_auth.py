from __future__ import annotations

import pytest

from api.models import ApiToken
from api.services import token_create, token_hash, token_revoke
from tests.api.conftest import error_of

pytestmark = pytest.mark.django_db


def test_token_is_stored_hashed_and_shown_once(player):
    token, secret = token_create(user=player, name="bot")
    assert secret.startswith("lad_") and len(secret) > 40
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.key_hash == token_hash(secret)
    assert secret not in {stored.key_hash, stored.prefix, stored.name}


@pytest.mark.parametrize("keyword", ["Token", "Bearer", "bearer"])
def test_token_and_bearer_keywords_authenticate(client_for, player, keyword):
    response = client_for(player, keyword=keyword).get("/api/v1/me/")
    assert response.status_code == 200
    assert response.json()["username"] == "alice"


def test_anonymous_reads_public_data_but_me_needs_auth(api, ladder):
    assert api.get("/api/v1/ladders/").status_code == 200
    response = api.get("/api/v1/me/")
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"
    assert "WWW-Authenticate" in response


def test_wrong_token_is_401(api):
    api.credentials(HTTP_AUTHORIZATION="Bearer lad_nope")
    response = api.get("/api/v1/ladders/")
    assert response.status_code == 401
    assert error_of(response)["code"] == "invalid_token"


def test_revocation_takes_effect_at_once(client_for, player, ladder):
    client = client_for(player)
    assert client.get("/api/v1/me/").status_code == 200
    token_revoke(user=player, token_id=ApiToken.objects.get(user=player).pk)
    response = client.get("/api/v1/me/")
    assert response.status_code == 401
    assert error_of(response)["code"] == "invalid_token"


def test_deactivated_user_token_fails(client_for, player):
    client = client_for(player)
    player.is_active = False
    player.save()
    assert client.get("/api/v1/me/").status_code == 401


def test_read_only_token_reads_but_cannot_write(client_for, player, ladder):
    client = client_for(player, read_only=True)
    assert client.get("/api/v1/me/").json()["read_only"] is True
    response = client.post(f"/api/v1/ladders/{ladder.slug}/membership/", {}, format="json")
    assert response.status_code == 403
    assert error_of(response)["code"] == "read_only_token"


def test_session_auth_works_with_csrf(player, ladder):
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)
    client.force_login(player)
    assert client.get("/api/v1/me/").json()["token"] is None
    response = client.post(f"/api/v1/ladders/{ladder.slug}/membership/", {}, format="json")
    assert response.status_code == 403
    assert "CSRF" in error_of(response)["message"]


def test_cannot_revoke_someone_elses_token(player_client, opponent):
    token, _ = token_create(user=opponent, name="theirs")
    player_client.post(f"/accounts/tokens/{token.pk}/revoke/")
    token.refresh_from_db()
    assert not token.is_revoked


def test_settings_page_links_to_tokens(player_client):
    assert b"/accounts/tokens/" in player_client.get("/accounts/settings/").content
