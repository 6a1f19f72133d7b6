"""One game at a time (docs/rules.md §13), from two processes, with parties.

Two client processes (``one_game_worker``) run the same 16 members of a 1 v 1 and 2 v 2 ladder
at once, each member searching again every round whether or not they are already paired, four
of them in parties of two. The ready check is long, so no game ends during the run: whatever
the interleaving, each player may be in one game at most, every search refused for it says so
(``in_game``), and no search is left waiting behind a game.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from django.utils import timezone

from core import db
from ladder.models import OPEN_STATUSES, Match, Participant
from matchmaking import parties
from matchmaking.models import EntryStatus, QueueEntry
from ratings.models import PlayerRating
from tests.factories import LadderFactory, member
from tests.test_celery_worker import database_url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not db.on_postgresql(), reason="two processes need a shared server database"),
]

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 3


def test_players_searching_again_while_paired_from_two_processes_are_never_in_two_games():
    ladder = LadderFactory(
        name="Busy",
        allow_teams=True,
        queue_formats="1v1,2v2",
        rematch_cooldown_minutes=0,
        ready_window_seconds=600,
        queue_min_win_probability=0.05,
        queue_widest_min_win_probability=0.05,
    )
    now = timezone.now()
    users = [member(ladder, f"busy{n:02d}") for n in range(16)]
    PlayerRating.objects.filter(ladder=ladder).update(rating=1500, rd=60, rd_as_of=now)
    for leader, mate in zip(users[0:8:2], users[1:8:2], strict=True):
        parties.party_invite(ladder=ladder, leader=leader, username=mate.username, now=now)
        party = parties.current_party(ladder=ladder, player=leader)
        parties.party_answer(party=party, player=mate, accept=True, now=now)

    env = {**os.environ, "DATABASE_URL": database_url(), "DATABASE_CONN_MAX_AGE": "0"}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.matchmaking.one_game_worker", ladder.slug, str(seed), str(ROUNDS)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    outcomes: Counter[str] = Counter()
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err[-3000:]
        outcomes.update(json.loads(out.strip().splitlines()[-1]))

    matches = list(Match.objects.filter(ladder=ladder))
    assert all(match.status in OPEN_STATUSES for match in matches), "nothing ends during the run"
    seats = Counter(Participant.objects.filter(match__ladder=ladder).values_list("player_id", flat=True))
    assert len(matches) >= 4, outcomes
    assert {match.queue_format for match in matches} == {"1v1", "2v2"}
    assert max(seats.values()) == 1, "a player is in two games"
    assert outcomes["in_game"] > 10, outcomes  # the paired kept searching, and were told why not
    assert not QueueEntry.objects.filter(
        ladder=ladder, status=EntryStatus.WAITING, player_id__in=list(seats)
    ).exists(), "a search of a player in a game is left waiting"
    placed_parties = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.MATCHED).exclude(party=None)
    assert placed_parties.exists(), "a party's game formed"
