"""Small things a new user tripped over: the list of ladders at /ladders/, match pages titled by
their sides with the reader's own marked, and deadlines in hours and minutes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.templatetags.moments import until_words
from tests.factories import LadderFactory, member

pytestmark = pytest.mark.django_db


def title_of(page: str) -> str:
    return re.search(r"<title>(.*?)</title>", page, re.S).group(1).strip()


def test_ladders_path_lists_every_ladder(client, ladder):
    LadderFactory(name="Go", slug="go")

    response = client.get("/ladders/")

    assert response.status_code == 200
    assert title_of(response.text).startswith("Ladders · ")
    assert 'href="/ladders/chess/"' in response.text and 'href="/ladders/go/"' in response.text


def test_ladders_path_refuses_a_post(client, ladder):
    assert client.post("/ladders/").status_code == 405


def test_match_page_is_titled_by_its_sides_with_the_readers_own_marked(client, ladder, player, opponent):
    match = match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    url = reverse("ladder:match", args=[match.pk])

    anonymous = client.get(url).text
    client.force_login(opponent)
    theirs = client.get(url).text

    assert title_of(anonymous).startswith("alice vs bob · Chess")
    assert title_of(theirs).startswith("alice vs bob (you) · Chess")
    assert re.search(r"<h1>alice vs bob \(you\) <span", theirs)
    assert f"Match {match.pk} · " in theirs


@pytest.mark.ladder(allow_teams=True)
def test_team_match_page_joins_each_sides_names(client, ladder, player, opponent):
    ash, brock = member(ladder, "ash"), member(ladder, "brock")
    match = match_report(
        ladder=ladder, reporter=player, sides=[SideInput([player, ash], 1), SideInput([opponent, brock], 2)]
    )

    client.force_login(ash)
    page = client.get(reverse("ladder:match", args=[match.pk])).text

    assert title_of(page).startswith("alice and ash (you) vs bob and brock · Chess")


NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("left", "words"),
    [
        (timedelta(hours=2, minutes=59), "2 hours 59 minutes from now"),
        (timedelta(hours=2, minutes=59, seconds=40), "3 hours from now"),
        (timedelta(hours=1, minutes=1), "1 hour 1 minute from now"),
        (timedelta(minutes=59), "59\xa0minutes from now"),
        (timedelta(days=1, hours=2), "1\xa0day, 2\xa0hours from now"),
    ],
)
def test_deadline_reads_in_hours_and_minutes(left, words, time_machine):
    time_machine.move_to(NOW, tick=False)

    assert until_words(NOW + left, NOW) == words


def test_awaiting_card_gives_the_minutes_of_the_deadline(client, ladder, player, opponent, time_machine):
    time_machine.move_to(NOW, tick=False)
    match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    time_machine.move_to(NOW + timedelta(hours=ladder.confirmation_hours - 3, minutes=1), tick=False)

    client.force_login(opponent)
    page = client.get(reverse("ladder:awaiting")).text

    assert "confirms itself 2 hours 59 minutes from now" in page
