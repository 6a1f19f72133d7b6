"""Headers on every answer: a strict Content-Security-Policy, Permissions-Policy, and API
answers given to a token or session marked private."""

from __future__ import annotations

import pytest
from django.http import HttpResponse, HttpResponseServerError
from django.test import RequestFactory
from rest_framework.test import APIClient

from api.services import token_create
from core.headers import SiteCSPMiddleware

pytestmark = pytest.mark.django_db


def directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {name: values for name, *values in (part.split() for part in policy.split(";") if part.strip())}


@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/accounts/signup/", "/ladders/{slug}/", "/admin/login/"])
def test_pages_carry_a_strict_policy(client, ladder, path):
    response = client.get(path.format(slug=ladder.slug))

    assert response.status_code == 200
    policy = directives(response)
    assert policy["default-src"] == ["'none'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["object-src"] == ["'none'"]
    assert "camera=()" in response["Permissions-Policy"]
    assert "geolocation=()" in response["Permissions-Policy"]


def test_signed_in_pages_and_the_admin_carry_it_too(moderator_client):
    for path in ("/accounts/settings/", "/accounts/tokens/", "/admin/", "/admin/accounts/user/"):
        response = moderator_client.get(path)
        assert response.status_code == 200, path
        assert directives(response)["script-src"] == ["'self'"], path
        assert "microphone=()" in response["Permissions-Policy"], path


def test_htmx_is_told_to_add_no_inline_style_nor_eval(client):
    page = client.get("/").text

    assert '<meta name="htmx-config" content=\'{"includeIndicatorStyles": false, "allowEval": false' in page
    assert page.index('name="htmx-config"') < page.index("htmx-2")  # read before htmx starts


@pytest.mark.parametrize("path", ["/api/docs/", "/api/docs/redoc/"])
def test_api_docs_keep_the_looser_policy_their_ui_needs(client, path):
    response = client.get(path)

    assert response.status_code == 200
    assert "'unsafe-inline'" in directives(response)["script-src"]
    assert "camera=()" in response["Permissions-Policy"]


def test_a_server_error_page_may_style_itself_inline_but_run_no_script():
    middleware = SiteCSPMiddleware(lambda request: HttpResponseServerError("<style>p{}</style>"))

    response = middleware(RequestFactory().get("/"))

    policy = directives(response)
    assert policy["style-src"] == ["'self'", "'unsafe-inline'"]
    assert policy["script-src"] == ["'self'"]


def test_an_ordinary_answer_gets_no_inline_style():
    response = SiteCSPMiddleware(lambda request: HttpResponse("ok"))(RequestFactory().get("/"))

    assert directives(response)["style-src"] == ["'self'"]


def test_token_answers_are_private_and_vary_on_authorization(player):
    _, secret = token_create(user=player, name="bot")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")

    response = api.get("/api/v1/me/")

    assert response.status_code == 200
    assert "private" in response["Cache-Control"]
    assert "public" not in response["Cache-Control"]
    assert "Authorization" in response["Vary"]


def test_session_answers_are_private(player):
    api = APIClient()
    api.force_login(player)

    response = api.get("/api/v1/ladders/")

    assert "private" in response["Cache-Control"]
    assert "Authorization" in response["Vary"]


def test_anonymous_reads_stay_cacheable_but_vary_on_authorization(ladder):
    response = APIClient().get("/api/v1/ladders/")

    assert response.status_code == 200
    assert "private" not in response.get("Cache-Control", "")
    assert "Authorization" in response["Vary"]
