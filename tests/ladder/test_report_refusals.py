"""A member who may not report games played outside the queue (suspended, or an account
younger than the ladder's ``new_account_hours``) is told why on the ladder page and the
report page, in the report service's own words, instead of being offered a form it refuses."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.models import Match
from ladder.moderation.suspensions import suspend
from tests.factories import member

pytestmark = pytest.mark.django_db

SUSPENDED_WORDS = "Reason: abusive chat."
NEW_WORDS = "New accounts can report only games the queue paired them in, for their first 24 hours."


def report_url(ladder) -> str:
    return reverse("ladder:report", args=[ladder.slug])


def duel_post(opponent) -> dict[str, str]:
    return {"kind": "1v1", "duel-opponent": opponent.username, "duel-result": "won", "duel-played_at": ""}


@pytest.fixture
def suspended(ladder, player, moderator):
    suspend(ladder=ladder, player=player, reason="abusive chat", ends_at=None, by=moderator, now=timezone.now())
    return player


def test_a_suspended_member_sees_why_instead_of_the_report_button_and_form(client, ladder, suspended, opponent):
    client.force_login(suspended)

    ladder_page = client.get(ladder.get_absolute_url()).text
    report_page = client.get(report_url(ladder))
    refused = client.post(report_url(ladder), duel_post(opponent))

    assert report_url(ladder) not in ladder_page.split('<div class="actions">', 1)[1].split("</div>", 1)[0]
    assert "You are suspended from Chess" in ladder_page and SUSPENDED_WORDS in ladder_page
    assert report_page.status_code == 200 and "You are suspended from Chess" in report_page.text
    assert SUSPENDED_WORDS in report_page.text
    assert 'name="kind"' not in report_page.text  # no form to fill in vain
    assert refused.status_code == 403 and SUSPENDED_WORDS in refused.text
    assert not Match.objects.exists()


@pytest.mark.ladder(new_account_hours=24)
def test_a_new_account_sees_why_instead_of_the_report_button_and_form(client, ladder, opponent):
    newcomer = member(ladder, "newcomer", date_joined=timezone.now() - timedelta(hours=2))
    client.force_login(newcomer)

    ladder_page = client.get(ladder.get_absolute_url()).text
    report_page = client.get(report_url(ladder)).text

    actions = ladder_page.split('<div class="actions">', 1)[1].split("</div>", 1)[0]
    assert "Report a result" not in actions and NEW_WORDS in actions
    assert NEW_WORDS in report_page and 'name="kind"' not in report_page


@pytest.mark.ladder(new_account_hours=24)
def test_an_older_account_keeps_the_button_and_the_form(client, ladder, player):
    client.force_login(player)

    assert "Report a result</a>" in client.get(ladder.get_absolute_url()).text
    assert 'name="kind" value="1v1"' in client.get(report_url(ladder)).text
