"""The queue panel through the views: HTMX partials, full pages, refusals, CSRF."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from matchmaking.models import EntryStatus, QueueEntry
from tests.factories import LadderFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def logged_in(client, user):
    client.force_login(user)
    return client


def test_join_returns_a_polling_panel_to_htmx(client, ladder, player):

    response = logged_in(client, player).post(reverse("matchmaking:join", args=["chess"]), **HTMX)

    assert response.status_code == 200
    assert "<html" not in response.text
    assert 'hx-trigger="every 2s"' in response.text
    assert "Searching for an opponent" in response.text
    assert "Opponents rated" in response.text and "1 player searching" not in response.text


def test_poll_pairs_into_the_ready_check_and_stops_once_both_are_ready(client, ladder, player, opponent):
    logged_in(client, player).post(reverse("matchmaking:join", args=["chess"]), **HTMX)
    other = logged_in(Client(), opponent)

    joined = other.post(reverse("matchmaking:join", args=["chess"]), **HTMX)
    assert joined.status_code == 286
    assert "Matched against" in joined.text and "alice" in joined.text
    assert 'id="queue-action">Ready</button>' in joined.text

    # The searching status sees the pairing: the whole body, with the ready check's own status polling.
    poll = client.get(reverse("matchmaking:status", args=["chess"]), {"shown": "w1"}, **HTMX)
    assert "Matched against" in poll.text and "bob" in poll.text
    assert "Ready check:" in poll.text and 'hx-trigger="every 2s"' in poll.text
    shown = re.search(r"shown=(r[0-9-]+)", poll.text).group(1)
    # The same ready check: its status alone, so the Ready button a keyboard user is on stays.
    same = client.get(reverse("matchmaking:status", args=["chess"]), {"shown": shown}, **HTMX)
    assert same.status_code == 200 and 'id="queue-body"' not in same.text and "Ready check:" in same.text

    match = QueueEntry.objects.get(player=player).match
    for who in (client, other):
        who.post(reverse("matchmaking:ready", args=[match.pk]), {"from": "queue"}, **HTMX)
    poll = client.get(reverse("matchmaking:status", args=["chess"]), {"shown": shown}, **HTMX)

    assert poll.status_code == 286
    assert 'hx-trigger="every 2s"' not in poll.text
    assert "Both ready: play" in poll.text and "bob" in poll.text
    assert "Go to the match" in poll.text


def test_a_waiting_poll_costs_three_queries_then_two(client, ladder, django_assert_num_queries, player):
    logged_in(client, player).post(reverse("matchmaking:join", args=["chess"]), **HTMX)

    # The user, the ladder with the latest search, the search for a partner (the session is cached).
    with django_assert_num_queries(3):
        first = client.get(reverse("matchmaking:status", args=["chess"]), **HTMX)
    # Nobody arrived since that search: the next poll skips it (matchmaking.attempts).
    with django_assert_num_queries(2):
        poll = client.get(reverse("matchmaking:status", args=["chess"]), **HTMX)

    assert first.status_code == poll.status_code == 200
    assert "Searching for an opponent" in first.text and "Searching for an opponent" in poll.text


def test_poll_of_an_unknown_ladder_is_404(client, ladder, player):
    logged_in(client, player)

    assert client.get(reverse("matchmaking:status", args=["nowhere"]), **HTMX).status_code == 404


def test_full_page_load_renders_the_same_state(client, ladder, player):
    logged_in(client, player).post(reverse("matchmaking:join", args=["chess"]))

    page = client.get(reverse("matchmaking:status", args=["chess"]))

    assert page.status_code == 200
    assert "<html" in page.text and "Searching for an opponent" in page.text


def test_cancel_leaves_at_once(client, ladder, player):
    logged_in(client, player).post(reverse("matchmaking:join", args=["chess"]), **HTMX)

    response = client.post(reverse("matchmaking:leave", args=["chess"]), **HTMX)

    assert response.status_code == 286
    assert "You left the queue." in response.text
    assert QueueEntry.objects.get(player=player).status == EntryStatus.LEFT


def test_timed_out_search_is_told_kindly(client, ladder, player):
    logged_in(client, player).post(reverse("matchmaking:join", args=["chess"]), **HTMX)
    QueueEntry.objects.filter(player=player).update(joined_at=timezone.now() - timedelta(minutes=6))

    response = client.get(reverse("matchmaking:status", args=["chess"]), **HTMX)

    assert response.status_code == 286
    assert "Nobody was available" in response.text and "Search again" in response.text


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("twice", "You are already searching for a match in Chess."),
        ("outsider", "Join Chess before searching for a match."),
        ("team", "Chess has no queue: its games are reported after play."),
    ],
)
def test_refusals_are_shown_in_the_panel_and_on_full_pages(client, ladder, setup, message, player):
    logged_in(client, player)
    if setup == "twice":
        client.post(reverse("matchmaking:join", args=["chess"]))
    elif setup == "outsider":
        from ratings.models import PlayerRating

        PlayerRating.objects.filter(player=player).update(is_active=False)
    else:
        ladder.allow_one_vs_one = False
        ladder.allow_teams = True
        ladder.save()

    partial = client.post(reverse("matchmaking:join", args=["chess"]), **HTMX)
    full = client.post(reverse("matchmaking:join", args=["chess"]), follow=True)

    assert message in partial.text
    assert message in full.text


def test_banned_account_cannot_search(ladder, player):
    player.is_active = False
    player.save()
    client = Client()
    client.force_login(player)  # a session opened before the ban

    response = client.post(reverse("matchmaking:join", args=["chess"]), **HTMX)

    assert response.status_code == 302  # the ban logs the session out
    assert not QueueEntry.objects.exists()


@pytest.mark.usefixtures("player")
def test_anonymous_get_and_csrf(ladder, opponent):
    assert Client().post(reverse("matchmaking:join", args=["chess"])).status_code == 302
    assert Client().get(reverse("matchmaking:join", args=["chess"])).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(opponent)
    assert strict.post(reverse("matchmaking:join", args=["chess"]), **HTMX).status_code == 403
    assert not QueueEntry.objects.exists()


def test_paired_players_report_the_result_on_the_match_page(client, ladder, player, opponent):
    logged_in(client, player).post(reverse("matchmaking:join", args=["chess"]))
    other = logged_in(Client(), opponent)
    other.post(reverse("matchmaking:join", args=["chess"]))
    match = QueueEntry.objects.get(player=player).match
    page = client.get(match.get_absolute_url())
    assert "Ready check" in page.text and "How did it go?" not in page.text
    refused = client.post(reverse("ladder:match_result", args=[match.pk]), {"outcome": "won"}, follow=True)
    assert "Both players must press Ready" in refused.text
    for who in (client, other):
        who.post(reverse("matchmaking:ready", args=[match.pk]))
    page = client.get(match.get_absolute_url())
    assert "How did it go?" in page.text

    client.post(reverse("ladder:match_result", args=[match.pk]), {"outcome": "won"})
    again = client.post(reverse("ladder:match_result", args=[match.pk]), {"outcome": "won"}, follow=True)
    assert "This match already has a result, or was cancelled." in again.text
    other.post(reverse("ladder:match_confirm", args=[match.pk]))

    match.refresh_from_db()
    assert match.status == "confirmed" and match.rated_at is not None
    from ratings.models import PlayerRating

    assert PlayerRating.objects.get(player=player).rating > 1500 > PlayerRating.objects.get(player=opponent).rating


def test_ladder_page_shows_the_queue_panel_or_the_team_note(client, ladder, player):
    page = logged_in(client, player).get(ladder.get_absolute_url())
    assert "Find a match" in page.text and 'id="queue-panel"' in page.text

    teams = LadderFactory(name="Teams", slug="teams", allow_one_vs_one=False, allow_teams=True)
    assert "This ladder has no queue: its games are reported after play." in Client().get(teams.get_absolute_url()).text
