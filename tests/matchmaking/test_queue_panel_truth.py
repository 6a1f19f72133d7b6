"""The queue panel tells the truth: no finished pairing shown as current, the ± limit kept
for the next search, and a searcher count of the others that is right after a cancel."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from ladder.models import Match, MatchStatus
from matchmaking.models import Block, QueueEntry

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
JOIN = reverse("matchmaking:join", args=["chess"])
LEAVE = reverse("matchmaking:leave", args=["chess"])
POLL = reverse("matchmaking:status", args=["chess"])


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def gap_value(html: str) -> str | None:
    """The value the rating-limit field of the join form starts with, if any."""
    field = re.search(r'<input[^>]*name="max_rating_gap"[^>]*>', html)
    assert field is not None, html
    value = re.search(r'value="([^"]*)"', field.group(0))
    return value.group(1) if value else None


def paired(player, opponent, *, gap: int | None = None) -> tuple[Client, Match]:
    alice = signed_in(player)
    alice.post(JOIN, {"max_rating_gap": gap or ""}, **HTMX)
    bob = signed_in(opponent)
    assert "Matched against" in bob.post(JOIN, **HTMX).text
    match = QueueEntry.objects.get(player=player).match
    for client in (alice, bob):  # past the ready check: a pairing to be played
        client.post(reverse("matchmaking:ready", args=[match.pk]))
    return alice, match


@pytest.mark.parametrize("status", [MatchStatus.PENDING, MatchStatus.CONFIRMED, MatchStatus.VOID])
def test_a_played_pairing_is_no_longer_shown_as_current(ladder, player, opponent, status):
    alice, match = paired(player, opponent)
    assert "Go to the match" in alice.get(ladder.get_absolute_url()).text  # still to be played
    Match.objects.filter(pk=match.pk).update(status=status)

    page = alice.get(ladder.get_absolute_url()).text
    poll = alice.get(POLL, **HTMX)

    for html in (page, poll.text):
        assert "Matched against" not in html and "Go to the match" not in html and "data-paired" not in html
        assert "Your last match:" in html and match.get_absolute_url() in html
        assert "Find a match" in html
    assert poll.status_code == 286


def test_search_again_keeps_the_limit_after_a_pairing(ladder, player, opponent):
    alice, match = paired(player, opponent, gap=300)
    assert "Search again" not in alice.get(POLL, **HTMX).text  # one game at a time
    alice.post(reverse("ladder:match_result", args=[match.pk]), {"outcome": "won"})

    poll = alice.get(POLL, **HTMX)

    assert "Find a match" in poll.text and gap_value(poll.text) == "300"


def test_search_again_keeps_the_limit_after_a_cancel(ladder, player):
    alice = signed_in(player)
    alice.post(JOIN, {"max_rating_gap": "150"}, **HTMX)

    left = alice.post(LEAVE, **HTMX)

    assert "You left the queue." in left.text and gap_value(left.text) == "150"
    assert gap_value(signed_in(player).get(reverse("matchmaking:status", args=["chess"])).text) == "150"


def test_without_a_limit_the_field_starts_empty(ladder, player):
    alice = signed_in(player)
    alice.post(JOIN, **HTMX)

    assert gap_value(alice.post(LEAVE, **HTMX).text) is None


def test_searching_now_counts_the_others_and_is_right_after_a_cancel(ladder, player, opponent):
    Block.objects.create(blocker=opponent, blocked=player)  # bob waits on, never paired with alice
    signed_in(opponent).post(JOIN, **HTMX)
    alice = signed_in(player)
    assert "1 player searching" in alice.get(ladder.get_absolute_url()).text  # the count is cached now

    joined = alice.post(JOIN, **HTMX)
    assert "Searching for an opponent" in joined.text
    assert "<dd>1 other player</dd>" in joined.text  # bob, not alice herself

    assert "<dd>1 other player</dd>" in alice.get(POLL, **HTMX).text

    left = alice.post(LEAVE, **HTMX)
    assert "1 player searching in this ladder" in left.text  # bob alone, at once


def test_a_waiting_poll_swaps_the_status_only_and_an_ending_poll_the_body(ladder, player, opponent):
    alice = signed_in(player)
    alice.post(JOIN, **HTMX)

    waiting = alice.get(POLL, **HTMX)
    assert 'id="queue-status"' in waiting.text and 'hx-trigger="every 2s"' in waiting.text
    assert "Cancel" not in waiting.text and 'id="queue-body"' not in waiting.text
    assert "HX-Retarget" not in waiting.headers

    signed_in(opponent).post(JOIN, **HTMX)
    ended = alice.get(POLL, **HTMX)
    assert ended.status_code == 286
    assert ended.headers["HX-Retarget"] == "#queue-body" and ended.headers["HX-Reswap"] == "outerHTML"
    assert 'id="queue-body"' in ended.text and "data-paired=" in ended.text
