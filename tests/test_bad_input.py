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
from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.models import MatchStatus
from matchmaking.models import QueueEntry
from matchmaking.services import BAD_GAP

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
TOO_BIG = "99999999999999999999"  # past 2⁶³, PostgreSQL's bigint


def signed_in(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def test_nul_in_a_ladder_search_is_a_400_naming_the_parameter(ladder, player):
    response = Client(raise_request_exception=False).get("/ladders/chess/", {"q": "al\x00ice"})

    assert response.status_code == 400
    assert NUL_IN_FIELD % {"field": "q"} in response.content.decode()


def test_nul_in_a_player_address_is_a_400(ladder, player):
    response = Client(raise_request_exception=False).get("/ladders/chess/players/al%00ice/")

    assert response.status_code == 400
    assert NUL_IN_ADDRESS in response.content.decode()


def test_nul_in_a_dispute_reason_is_a_400_and_changes_nothing(ladder, player, opponent):
    match = match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])

    response = signed_in(opponent).post(reverse("ladder:match_dispute", args=[match.pk]), {"reason": "I won\x00"})

    assert response.status_code == 400
    assert NUL_IN_FIELD % {"field": "reason"} in response.content.decode()
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING


def test_nul_in_a_token_name_is_a_400_and_creates_no_token(player):
    response = signed_in(player).post(reverse("api_tokens"), {"name": "bot\x00"})

    assert response.status_code == 400
    assert NUL_IN_FIELD % {"field": "name"} in response.content.decode()
    assert not ApiToken.objects.filter(user=player).exists()


def test_a_session_cookie_holding_nul_is_ignored(ladder):
    client = Client(raise_request_exception=False)
    client.cookies["sessionid"] = "abcdefgh\x00ijkl"

    response = client.get("/ladders/chess/")

    assert response.status_code == 200
    assert "Log in" in response.content.decode()


@pytest.mark.parametrize("search", ["", "ali"])
def test_a_page_number_past_bigint_serves_the_last_page(ladder, player, search):
    response = Client(raise_request_exception=False).get("/ladders/chess/", {"q": search, "page": TOO_BIG})

    assert response.status_code == 200
    assert "alice" in response.content.decode()


def test_a_rating_limit_past_the_column_is_a_form_error(ladder, player):
    response = signed_in(player).post(
        reverse("matchmaking:join", args=["chess"]), {"max_rating_gap": str(2**31 + 5)}, **HTMX
    )

    assert response.status_code == 200
    assert BAD_GAP in response.content.decode()
    assert not QueueEntry.objects.filter(player=player).exists()


def test_a_rating_limit_past_the_column_without_htmx_is_a_message(ladder, player):
    response = signed_in(player).post(
        reverse("matchmaking:join", args=["chess"]), {"max_rating_gap": "1" + "0" * 40}, follow=True
    )

    assert response.status_code == 200
    assert BAD_GAP in [str(message) for message in response.context["messages"]]
    assert not QueueEntry.objects.filter(player=player).exists()
