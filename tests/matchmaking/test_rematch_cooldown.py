"""The rematch cooldown counts games that were played, and the panel and the API say whom it
holds back (docs/rules.md §13, "Choice")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from matchmaking import lifecycle
from matchmaking import services as q
from matchmaking.models import EntryStatus
from tests.matchmaking.played import played

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_a_ready_check_nobody_answered_does_not_count_toward_the_cooldown(sql_or_orm, ladder, player, opponent):
    now = timezone.now()
    q.queue_join(ladder=ladder, player=player, now=now)
    entry = q.queue_join(ladder=ladder, player=opponent, now=now)
    lifecycle.settle(entry.match, now=now + timedelta(seconds=61))  # nobody pressed Ready: cancelled
    later = now + timedelta(minutes=3)  # past both warnings' holds, inside the 10-minute cooldown

    q.queue_join(ladder=ladder, player=player, now=later)
    again = q.queue_join(ladder=ladder, player=opponent, now=later)

    assert again.status == EntryStatus.MATCHED and again.opponent_id == player.pk


def test_a_played_game_holds_the_pair_apart_and_the_panel_and_api_say_until_when(
    sql_or_orm, client, ladder, player, opponent, client_for
):
    now = timezone.now()
    q.queue_join(ladder=ladder, player=player, now=now - timedelta(minutes=2))
    first = q.queue_join(ladder=ladder, player=opponent, now=now - timedelta(minutes=2))
    played(first.match, now - timedelta(minutes=2) + timedelta(seconds=10))

    q.queue_join(ladder=ladder, player=player, now=now)
    waiting = q.queue_join(ladder=ladder, player=opponent, now=now)
    assert waiting.status == EntryStatus.WAITING

    client.force_login(player)
    panel = client.get(reverse("matchmaking:status", args=[ladder.slug])).content.decode()
    free_at = first.match.created_at + timedelta(minutes=ladder.rematch_cooldown_minutes)
    assert "Not yet" in panel and "bob until" in panel and "rematch cooldown" in panel
    body = client_for(player).get(f"/api/v1/ladders/{ladder.slug}/queue/").json()
    assert body["status"] == "waiting"
    assert [row["username"] for row in body["held_back"]] == ["bob"]
    assert body["held_back"][0]["until"].startswith(free_at.isoformat()[:19].replace("+00:00", ""))
