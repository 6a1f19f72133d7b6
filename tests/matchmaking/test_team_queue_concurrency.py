"""The team and free-for-all queue under load on PostgreSQL (docs/rules.md §13, "Claiming").

200 players, some in parties of two, search 2 v 2, 4 v 4 and free-for-all of 4 (some
several at once), join from 8 threads with their own connections, then all poll a few
rounds from 8 threads. Whatever the interleaving: nobody is in two games, every game has
its format's sides, parties stay on one side, every pair is inside both windows, and no
search is matched without its match.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections import Counter, defaultdict
from itertools import combinations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from core import db
from ladder import formats
from ladder.models import OPEN_STATUSES, Match, Participant
from matchmaking import parties
from matchmaking import services as q
from matchmaking.models import EntryStatus, QueueEntry
from ratings.engines import RatingState, rating_difference_for_probability
from ratings.models import PlayerRating
from tests.factories import LadderFactory, member

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not db.on_postgresql(), reason="the claims' SKIP LOCKED is PostgreSQL's"),
]

THREADS = 8
SIDES = {"2v2": [2, 2], "4v4": [4, 4], "ffa4": [1, 1, 1, 1]}


def run_in_threads(chunks, work):
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(chunks))

    def worker(chunk):
        barrier.wait()
        try:
            for item in chunk:
                work(item)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(chunk,)) for chunk in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def window_gap(ladder, entry, at):
    """The rating gap ``entry``'s player accepts at ``at``: the window at their waiting time and their ± limit."""
    waited = (at - entry.joined_at).total_seconds()
    p_min = max(
        ladder.queue_min_win_probability - ladder.queue_widening_per_minute * waited / 60,
        ladder.queue_widest_min_win_probability,
    )
    state = RatingState(entry.rating, entry.rd, entry.volatility, entry.rd_as_of.timestamp())
    rd = ladder.get_engine().rd_at(state, at.timestamp())
    gap = abs(rating_difference_for_probability(p_min, rd, ladder.rd_max))
    return gap if entry.max_rating_gap is None else min(gap, entry.max_rating_gap)


def build_queue(ladder, rng):
    """200 members; 20 parties of two; each unit: who joins, their formats (a party cannot search a
    free-for-all), the party and the ± limit."""
    now = timezone.now()
    users = []
    for n in range(200):
        user = member(ladder, f"t{n:03d}")
        PlayerRating.objects.filter(ladder=ladder, player=user).update(
            rating=rng.uniform(1350, 1650), rd=rng.uniform(40, 90), rd_as_of=now
        )
        users.append(user)
    units = []
    for n in range(0, 40, 2):
        leader, mate = users[n], users[n + 1]
        parties.party_invite(ladder=ladder, leader=leader, username=mate.username, now=now)
        party = parties.current_party(ladder=ladder, player=leader)
        parties.party_answer(party=party, player=mate, accept=True, now=now)
        units.append((rng.choice([leader, mate]), rng.choice([["2v2"], ["4v4"], ["2v2", "4v4"]]), party.pk, None))
    solo_choices = [["2v2"], ["4v4"], ["ffa4"], ["2v2", "ffa4"], ["2v2", "4v4", "ffa4"]]
    units += [(user, rng.choice(solo_choices), None, rng.choice([None, None, 250])) for user in users[40:]]
    return users, units


def test_two_hundred_searchers_from_eight_threads():
    ladder = LadderFactory(
        name="Crowd",
        allow_teams=True,
        allow_free_for_all=True,
        queue_formats="2v2,4v4,ffa4",
        rematch_cooldown_minutes=0,
        queue_min_win_probability=0.25,
        queue_widest_min_win_probability=0.25,
    )
    rng = random.Random(16)
    users, units = build_queue(ladder, rng)
    rng.shuffle(units)

    def join(unit):
        user, codes, party, gap = unit
        q.queue_join(ladder=ladder, player=user, formats_wanted=codes, party=party, max_rating_gap=gap)

    run_in_threads([units[i::THREADS] for i in range(THREADS)], join)
    for _ in range(3):
        order = users[:]
        rng.shuffle(order)
        run_in_threads(
            [order[i::THREADS] for i in range(THREADS)], lambda user: q.queue_poll(ladder=ladder, player=user)
        )

    matches = list(Match.objects.filter(ladder=ladder))
    assert len(matches) >= 20, "a crowd this close in rating forms many games"
    assert {m.queue_format for m in matches} == set(SIDES)
    assert QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.MATCHED).exclude(party=None).exists()
    check_nobody_twice(ladder, matches)
    for match in matches:
        check_game(ladder, match)
    assert not QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.MATCHED, match=None).exists()


def check_nobody_twice(ladder, matches):
    seats = Counter(Participant.objects.filter(match__ladder=ladder).values_list("player_id", flat=True))
    assert max(seats.values()) == 1, "a player is in two games"
    open_ids = {m.pk for m in matches if m.status in OPEN_STATUSES}
    assert len(open_ids) == len(matches)  # nothing ended yet: every game is still in its ready check
    per_match = Counter(
        QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.MATCHED).values_list("player_id", "match_id")
    )
    assert max(per_match.values()) == 1
    matched_players = Counter(player for player, _ in per_match)
    assert max(matched_players.values()) == 1, "a player's searches were matched twice"


def check_game(ladder, match):
    entries = {e.player_id: e for e in QueueEntry.objects.filter(match=match, status=EntryStatus.MATCHED)}
    sides: dict[int, list[int]] = defaultdict(list)
    for index, player in Participant.objects.filter(match=match).values_list("side__index", "player_id"):
        sides[index].append(player)
    assert [len(sides[index]) for index in sorted(sides)] == SIDES[match.queue_format]
    assert set(entries) == {p for side in sides.values() for p in side}, "every player's search is matched to it"
    bit = formats.FORMATS[match.queue_format].bit
    side_of = {p: index for index, players in sides.items() for p in players}
    by_party: dict[int, set[int]] = defaultdict(set)
    for player, entry in entries.items():
        assert entry.formats & bit, "placed in a format they did not search"
        if entry.party_id is not None:
            by_party[entry.party_id].add(side_of[player])
    for party, party_sides in by_party.items():
        assert len(party_sides) == 1, f"party {party} is split across sides"
        assert sum(e.party_id == party for e in entries.values()) == 2, f"party {party} came incomplete"
    for x, y in combinations(entries.values(), 2):
        gap = abs(x.rating - y.rating)
        assert gap <= window_gap(ladder, x, match.played_at) + 1e-6
        assert gap <= window_gap(ladder, y, match.played_at) + 1e-6


def test_a_member_leaving_while_the_party_joins_leaves_no_search_behind(monkeypatch):
    """bob leaves the party (another connection) just as ann's join starts the party's searches."""
    ladder = LadderFactory(name="Race", allow_teams=True, queue_formats="2v2", rematch_cooldown_minutes=0)
    ann, bob = member(ladder, "ann"), member(ladder, "bob")
    now = timezone.now()
    parties.party_invite(ladder=ladder, leader=ann, username="bob", now=now)
    party = parties.current_party(ladder=ladder, player=ann)
    parties.party_answer(party=party, player=bob, accept=True, now=now)
    real = q._entry_create
    errors: list[BaseException] = []

    def leave():
        try:
            parties.party_leave(ladder=ladder, player=bob)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    leaver = threading.Thread(target=leave)

    def entry_create(**kwargs):
        if leaver.ident is None:  # the first member's search: the leave runs now
            leaver.start()
            leaver.join(timeout=5)  # a join that locks the party waits for the leave instead
        return real(**kwargs)

    monkeypatch.setattr(q, "_entry_create", entry_create)
    with contextlib.suppress(ValidationError):  # refusing the join is a right answer too
        q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"])
    leaver.join()
    assert not errors, errors
    assert parties.current_party(ladder=ladder, player=bob) is None
    assert not QueueEntry.objects.filter(party=party, status=EntryStatus.WAITING).exists(), (
        "the party searches with a player who left it"
    )
