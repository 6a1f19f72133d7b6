"""Searching again reuses the player's one open entry, and leaving is followed by a short cool-down
(issue 12, item 10); a read-only token's poll only reads (item 17).

The service rules run on both ways the queue writes: the hand-written SQL of PostgreSQL and
the ORM of other databases.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from ladder.models import Match
from matchmaking import services as q
from matchmaking.models import EntryStatus, QueueEntry
from ratings.models import PlayerRating
from tests.api.conftest import error_of
from tests.matchmaking.played import played

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_a_hundred_join_leave_cycles_leave_one_row(sql_or_orm, ladder, player):
    now = timezone.now()

    for _ in range(100):
        q.queue_join(ladder=ladder, player=player, now=now)
        q.queue_leave(ladder=ladder, player=player, now=now)
        now += q.QUEUE_REJOIN_COOLDOWN

    entry = QueueEntry.objects.get(player=player)
    assert entry.status == EntryStatus.LEFT


def test_a_reused_entry_starts_afresh(sql_or_orm, ladder, player):
    now = timezone.now()
    first = q.queue_join(ladder=ladder, player=player, max_rating_gap=50, now=now - timedelta(minutes=5))
    q.queue_leave(ladder=ladder, player=player, now=now - timedelta(minutes=4))

    again = q.queue_join(ladder=ladder, player=player, now=now)

    entry = QueueEntry.objects.get(pk=first.pk)
    assert again.pk == first.pk
    assert entry.status == EntryStatus.WAITING and entry.joined_at == now and entry.last_seen_at == now
    assert entry.max_rating_gap is None and entry.ended_at is None and entry.rejoin_after is None


def test_matched_entries_are_kept_and_rows_stay_one_per_match_plus_one(sql_or_orm, ladder, player, opponent):
    now = timezone.now()

    for _ in range(3):
        q.queue_join(ladder=ladder, player=player, now=now)
        q.queue_leave(ladder=ladder, player=player, now=now)
        now += q.QUEUE_REJOIN_COOLDOWN
        q.queue_join(ladder=ladder, player=player, now=now)
        paired = q.queue_join(ladder=ladder, player=opponent, now=now)
        assert paired.status == EntryStatus.MATCHED
        played(paired.match, now)
        now += timedelta(hours=1)  # past the ladder's rematch cool-down

    matched = QueueEntry.objects.filter(player=player, status=EntryStatus.MATCHED)
    assert matched.count() == 3 == Match.objects.count()
    assert {entry.match_id for entry in matched} == set(Match.objects.values_list("pk", flat=True))
    q.queue_join(ladder=ladder, player=player, now=now)
    assert QueueEntry.objects.filter(player=player).count() == 4


def test_rejoining_during_the_cooldown_is_refused_then_allowed(sql_or_orm, ladder, player):
    left_at = timezone.now()
    q.queue_join(ladder=ladder, player=player, now=left_at - timedelta(minutes=1))
    q.queue_leave(ladder=ladder, player=player, now=left_at)

    with pytest.raises(ValidationError) as refused:
        q.queue_join(ladder=ladder, player=player, now=left_at + timedelta(seconds=1.5))

    assert refused.value.code == "queue_cooldown"
    assert refused.value.messages == [q.REJOIN_COOLDOWN % {"retry_after": 4}]
    entry = q.queue_join(ladder=ladder, player=player, now=left_at + q.QUEUE_REJOIN_COOLDOWN)
    assert entry.status == EntryStatus.WAITING


def test_no_cooldown_after_a_search_expires_or_is_abandoned(sql_or_orm, ladder, player, opponent):
    PlayerRating.objects.filter(player=opponent).update(rating=3000)  # far from alice: they never pair
    now = timezone.now()
    q.queue_join(ladder=ladder, player=player, now=now - timedelta(seconds=ladder.queue_timeout_seconds))
    q.queue_join(ladder=ladder, player=opponent, now=now - q.STALE_AFTER - timedelta(seconds=1))
    QueueEntry.objects.filter(player=player).update(last_seen_at=now)  # polled to the end

    assert q.queue_sweep(now=now) == q.SweepStats(expired=1, left=1)

    assert q.queue_join(ladder=ladder, player=player, now=now).status == EntryStatus.WAITING
    assert q.queue_join(ladder=ladder, player=opponent, now=now).status == EntryStatus.WAITING


def test_the_page_shows_the_cooldown_and_then_joins(client, ladder, player):
    client.force_login(player)
    join, leave = reverse("matchmaking:join", args=["chess"]), reverse("matchmaking:leave", args=["chess"])
    with time_machine.travel("2026-05-01 12:00:00Z", tick=False) as clock:
        client.post(join, **HTMX)
        client.post(leave, **HTMX)
        clock.shift(2)

        refused = client.post(join, **HTMX)

        assert q.REJOIN_COOLDOWN % {"retry_after": 3} in refused.text
        assert QueueEntry.objects.get(player=player).status == EntryStatus.LEFT
        clock.shift(3)
        assert "Searching for an opponent" in client.post(join, **HTMX).text


def test_the_api_refuses_with_429_and_retry_after(client_for, ladder, player):
    api = client_for(player)
    url = f"/api/v1/ladders/{ladder.slug}/queue/"
    with time_machine.travel("2026-05-01 12:00:00Z", tick=False) as clock:
        api.post(url, {}, format="json")
        api.delete(url)

        refused = api.post(url, {}, format="json")

        assert refused.status_code == 429 and refused["Retry-After"] == "5"
        assert error_of(refused) == {
            "code": "queue_cooldown",
            "message": q.REJOIN_COOLDOWN % {"retry_after": 5},
            "fields": {},
        }
        clock.shift(5)
        assert api.post(url, {}, format="json").status_code == 201


def test_polling_with_a_read_only_token_neither_keeps_alive_nor_pairs(client_for, ladder, player, opponent):
    PlayerRating.objects.filter(player=opponent).update(rating=1520)
    url = f"/api/v1/ladders/{ladder.slug}/queue/"
    start = timezone.now() - timedelta(seconds=20)
    for user in (player, opponent):  # both waiting, and neither seen for 20 s; pairable once their limits go
        q.queue_join(ladder=ladder, player=user, max_rating_gap=1, now=start)
    QueueEntry.objects.update(max_rating_gap=None)

    polled = client_for(player, read_only=True).get(url)

    assert polled.status_code == 200 and polled.json()["status"] == "waiting"
    entries = QueueEntry.objects.order_by("player__username")
    assert [(e.status, e.last_seen_at) for e in entries] == [(EntryStatus.WAITING, start)] * 2
    assert not Match.objects.exists()
    assert client_for(player).get(url).json()["status"] == "matched"  # a token that may write still polls
