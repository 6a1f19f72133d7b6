"""The demo's searches in the Widelands ladder (``seed_demo_queue``), without the whole demo season."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from matchmaking.management.commands.seed_demo_queue import SEARCHES, WAITED
from matchmaking.models import EntryStatus, PartyMember, QueueEntry, QueuePenalty
from tests.factories import member

pytestmark = [pytest.mark.django_db, pytest.mark.ladder(name="Widelands Teams", slug="widelands-teams")]
NAMES = [name for _code, units in SEARCHES for unit in units for name in unit]


@pytest.fixture
def searchers(ladder):
    return {name: member(ladder, name) for name in NAMES}


def test_the_ladder_offers_the_demo_formats_and_nine_search(ladder, searchers):
    call_command("seed_demo_queue", force=True)

    ladder.refresh_from_db()
    assert ladder.queue_format_codes == ["2v2", "ffa4", "teams4"] and ladder.allow_uneven_teams
    waiting = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING)
    assert waiting.count() == 9
    party = waiting.exclude(party=None)
    assert sorted(party.values_list("player__username", flat=True)) == ["dawn", "iris"]
    assert set(PartyMember.objects.values_list("player__username", "status")) == {
        ("dawn", "accepted"),
        ("iris", "accepted"),
    }


def test_a_second_run_starts_nothing_new_but_brings_the_times_up_to_date(ladder, searchers, capsys):
    call_command("seed_demo_queue", force=True)
    rows = sorted(QueueEntry.objects.values_list("pk", "player_id", "status"))
    QueueEntry.objects.update(
        joined_at=timezone.now() - timedelta(hours=3), last_seen_at=timezone.now() - timedelta(hours=3)
    )

    call_command("seed_demo_queue", force=True)

    assert sorted(QueueEntry.objects.values_list("pk", "player_id", "status")) == rows
    now = timezone.now()
    for entry in QueueEntry.objects.all():
        assert now - WAITED - timedelta(seconds=30) < entry.joined_at <= now - WAITED + timedelta(seconds=1)
        assert now - entry.last_seen_at < timedelta(seconds=30)
    assert "Demo queue: 9 searching in Widelands Teams, 0 started now." in capsys.readouterr().out


def test_a_demo_player_banned_for_missed_ready_checks_searches_again(ladder, searchers):
    now = timezone.now()
    QueuePenalty.objects.create(
        ladder=ladder, player=searchers["arven"], strikes=3, last_strike_at=now, banned_until=now + timedelta(hours=1)
    )

    call_command("seed_demo_queue", force=True)

    assert QueueEntry.objects.filter(player=searchers["arven"], status=EntryStatus.WAITING).exists()
    assert not QueuePenalty.objects.exists()


def test_without_the_demo_ladder_it_says_to_seed_first(db):
    with pytest.raises(CommandError, match="run seed_demo first"):
        call_command("seed_demo_queue", force=True)


def test_it_refuses_production_without_force(settings, ladder, searchers):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="pass --force"):
        call_command("seed_demo_queue")

    assert not QueueEntry.objects.exists()
