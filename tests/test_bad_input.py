"""Bad input to the site's pages is a clear 400 or a form error, never a 500 (issue 12, item 8).

The requests go through the test client to the real PostgreSQL, which refuses a NUL
character in any text value: that refusal, not the views, is what used to be the 500.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from api.models import ApiToken
from core.bad_input import NUL_IN_ADDRESS, NUL_IN_FIELD
from ladder.models import MatchStatus
from ladder.services.matches import SideInput, match_report
from matchmaking.models import QueueEntry
from matchmaking.services import BAD_GAP
from tests.factories import LadderFactory, member

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
TOO_BIG = "99999999999999999999"  # past 2⁶³, PostgreSQL's bigint


@pytest.fixture
def chess():
    return LadderFactory(name="Chess", slug="chess")


@pytest.fixture
def alice(chess):
    return member(chess, "alice")


@pytest.fixture
def bob(chess):
    return member(chess, "bob")


def signed_in(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def test_nul_in_a_ladder_search_is_a_400_naming_the_parameter(chess, alice):
    response = Client(raise_request_exception=False).get("/ladders/chess/", {"q": "al\x00ice"})

    assert response.status_code == 400
    assert NUL_IN_FIELD % {"field": "q"} in response.content.decode()


def test_nul_in_a_player_address_is_a_400(chess, alice):
    response = Client(raise_request_exception=False).get("/ladders/chess/players/al%00ice/")

    assert response.status_code == 400
    assert NUL_IN_ADDRESS in response.content.decode()


def test_nul_in_a_dispute_reason_is_a_400_and_changes_nothing(chess, alice, bob):
    match = match_report(ladder=chess, reporter=alice, sides=[SideInput([alice], 1), SideInput([bob], 2)])

    response = signed_in(bob).post(reverse("ladder:match_dispute", args=[match.pk]), {"reason": "I won\x00"})

    assert response.status_code == 400
    assert NUL_IN_FIELD % {"field": "reason"} in response.content.decode()
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING


def test_nul_in_a_token_name_is_a_400_and_creates_no_token(alice):
    response = signed_in(alice).post(reverse("api_tokens"), {"name": "bot\x00"})

    assert response.status_code == 400
    assert NUL_IN_FIELD % {"field": "name"} in response.content.decode()
    assert not ApiToken.objects.filter(user=alice).exists()


def test_a_session_cookie_holding_nul_is_ignored(chess):
    client = Client(raise_request_exception=False)
    client.cookies["sessionid"] = "abcdefgh\x00ijkl"

    response = client.get("/ladders/chess/")

    assert response.status_code == 200
    assert "Log in" in response.content.decode()


@pytest.mark.parametrize("search", ["", "ali"])
def test_a_page_number_past_bigint_serves_the_last_page(chess, alice, search):
    response = Client(raise_request_exception=False).get("/ladders/chess/", {"q": search, "page": TOO_BIG})

    assert response.status_code == 200
    assert "alice" in response.content.decode()


def test_a_rating_limit_past_the_column_is_a_form_error(chess, alice):
    response = signed_in(alice).post(
        reverse("matchmaking:join", args=["chess"]), {"max_rating_gap": str(2**31 + 5)}, **HTMX
    )

    assert response.status_code == 200
    assert BAD_GAP in response.content.decode()
    assert not QueueEntry.objects.filter(player=alice).exists()


def test_a_rating_limit_past_the_column_without_htmx_is_a_message(chess, alice):
    response = signed_in(alice).post(
        reverse("matchmaking:join", args=["chess"]), {"max_rating_gap": "1" + "0" * 40}, follow=True
    )

    assert response.status_code == 200
    assert BAD_GAP in [str(message) for message in response.context["messages"]]
    assert not QueueEntry.objects.filter(player=alice).exists()
