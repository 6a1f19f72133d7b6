"""The queue's rules (docs/rules.md §13) on hand-built queues.

Each rule is checked on both ways of running the queue's hot statements: the
hand-written SQL used on PostgreSQL and the ORM used on other databases (SQLite).
"""

from __future__ import annotations

import random
import threading
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.models import Match, MatchStatus
from matchmaking import services as q
from matchmaking import window
from matchmaking.models import Block, EntryStatus, QueueEntry
from ratings.engines import win_probability
from ratings.models import PlayerRating, RatingAdjustment
from ratings.services import ladder_replay
from tests.factories import LadderFactory, member, waiting
from tests.matchmaking.played import played

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sql_or_orm")]


def rated(ladder, user, rating=1500.0, rd=60.0, now=None):
    """``user``, a member of ``ladder``, rated ``rating`` ± ``rd`` as of ``now``."""
    PlayerRating.objects.filter(ladder=ladder, player=user).update(rating=rating, rd=rd, rd_as_of=now or timezone.now())
    return user


def rated_member(ladder, name, rating=1500.0, rd=60.0, now=None):
    """A new member called ``name``, rated ``rating`` ± ``rd`` as of ``now``."""
    return rated(ladder, member(ladder, name), rating, rd, now)


def join(ladder, user, now, **kwargs):
    return q.queue_join(ladder=ladder, player=user, now=now, **kwargs)


def test_pairs_the_opponent_closest_to_fifty_percent(ladder):
    now = timezone.now()
    me = rated_member(ladder, "me", 1500)
    for name, rating in (("far", 1700), ("near", 1530), ("other", 1420)):
        waiting(ladder, rated_member(ladder, name, rating), now - timedelta(seconds=5))

    entry = join(ladder, me, now)

    assert entry.status == EntryStatus.MATCHED
    assert entry.opponent.username == "near"
    assert entry.win_probability == pytest.approx(win_probability(1500, 60, 1530, 60), abs=1e-6)
    match = entry.match
    assert match.status == MatchStatus.READY_CHECK
    assert match.ready_deadline == now + timedelta(seconds=ladder.ready_window_seconds)
    assert sorted(p.player.username for p in match.participants.all()) == ["me", "near"]
    assert QueueEntry.objects.get(player__username="near").status == EntryStatus.MATCHED
    assert QueueEntry.objects.get(player__username="far").status == EntryStatus.WAITING


def test_nobody_outside_the_window_is_paired(ladder):
    now = timezone.now()
    join(ladder, rated_member(ladder, "strong", 1900), now)

    entry = join(ladder, rated_member(ladder, "weak", 1500), now)

    assert entry.status == EntryStatus.WAITING
    assert win_probability(1500, 60, 1900, 60) < 0.15
    low, high = window.rating_window(ladder, entry, now)
    assert low < 1500 < 1900 < high  # inside the indexed range (any RD), refused by the exact check


def test_window_widens_with_waiting_time_up_to_the_bound(ladder):
    ladder.queue_widening_per_minute = 0.05
    ladder.queue_widest_min_win_probability = 0.05
    ladder.save()
    start = timezone.now()
    assert window.window_min_probability(ladder, timedelta(minutes=1)) == pytest.approx(0.10)
    assert window.window_min_probability(ladder, timedelta(minutes=30)) == 0.05
    join(ladder, rated_member(ladder, "strong", 1850, now=start), start)
    weak = rated_member(ladder, "weak", 1500, now=start)
    p = win_probability(1500, 60, 1850, 60)
    assert 0.05 < p < 0.15

    entry = join(ladder, weak, start)
    assert entry.status == EntryStatus.WAITING

    later = q.queue_poll(ladder=ladder, player=weak, now=start + timedelta(minutes=3))
    assert later.status == EntryStatus.MATCHED and later.opponent.username == "strong"


def test_rds_inflated_to_now_are_used(ladder):
    """Idle time widens RD, which flattens the curve: a pair outside the window comes inside."""
    now = timezone.now()
    long_ago = now - timedelta(days=200)
    join(ladder, rated_member(ladder, "rusty", 1850, rd=50, now=long_ago), now)
    entry = join(ladder, rated_member(ladder, "fresh", 1500, rd=50, now=long_ago), now)

    assert win_probability(1500, 50, 1850, 50) < 0.15  # with the stored RDs: no pairing
    assert entry.status == EntryStatus.MATCHED  # with RD 350 now, the game is fair enough


def test_rds_grow_with_each_search_s_own_volatility_on_glicko2():
    ladder = LadderFactory(name="Go", engine="glicko2")
    now = timezone.now()
    month_ago = now - timedelta(days=30)
    calm, wild = rated_member(ladder, "calm", 1500, now=month_ago), rated_member(ladder, "wild", 1500, now=month_ago)
    PlayerRating.objects.filter(player=wild).update(volatility=0.2)

    calm_low, _ = window.rating_window(ladder, waiting(ladder, calm, now), now)
    wild_low, _ = window.rating_window(ladder, waiting(ladder, wild, now), now)

    assert wild_low < calm_low  # a larger RD now flattens the curve: a wider rating range


def test_own_rating_limit_is_respected_and_widening_never_passes_it(ladder):
    ladder.queue_widening_per_minute = 1.0
    ladder.save()
    now = timezone.now()
    join(ladder, rated_member(ladder, "near", 1580), now)
    picky = rated_member(ladder, "picky", 1500)

    entry = join(ladder, picky, now, max_rating_gap=50)
    assert entry.status == EntryStatus.WAITING
    assert window.rating_window(ladder, entry, now + timedelta(minutes=10)) == (1450, 1550)
    assert q.queue_poll(ladder=ladder, player=picky, now=now + timedelta(minutes=4)).status == EntryStatus.WAITING


def test_searches_whose_own_limit_refuses_do_not_crowd_out_others(ladder, monkeypatch):
    monkeypatch.setattr(window, "CANDIDATES_EACH_WAY", 2)
    now = timezone.now()
    for number, rating in enumerate((1505, 1510, 1515)):
        join(ladder, rated_member(ladder, f"picky{number}", rating), now, max_rating_gap=1)
    join(ladder, rated_member(ladder, "farther", 1560), now)

    entry = join(ladder, rated_member(ladder, "me", 1500), now)

    assert entry.status == EntryStatus.MATCHED and entry.opponent.username == "farther"


def test_no_immediate_rematch_and_blocks(ladder, player, opponent):
    now = timezone.now()
    rated(ladder, player), rated(ladder, opponent)
    carol = rated_member(ladder, "carol")
    join(ladder, player, now)
    first = join(ladder, opponent, now)
    assert first.status == EntryStatus.MATCHED
    played(first.match, now)

    join(ladder, player, now + timedelta(minutes=1))
    assert join(ladder, opponent, now + timedelta(minutes=1)).status == EntryStatus.WAITING  # cooldown
    Block.objects.create(blocker=carol, blocked=player)
    assert join(ladder, carol, now + timedelta(minutes=1)).opponent.username == "bob"
    assert QueueEntry.objects.get(player=player, status="waiting")


def test_timeout_expires_and_restarts_the_rd_clock_without_growth(ladder):
    start = timezone.now() - timedelta(days=3)
    me = rated_member(ladder, "lonely", 1500, rd=60, now=start)
    join(ladder, me, start + timedelta(days=2))

    entry = q.queue_poll(ladder=ladder, player=me, now=start + timedelta(days=2, minutes=5))

    assert entry.status == EntryStatus.EXPIRED
    rating = PlayerRating.objects.get(ladder=ladder, player=me)
    assert rating.rd == 60  # not inflated
    assert rating.rd_as_of == start + timedelta(days=2, minutes=5)
    assert RatingAdjustment.objects.get(player=me).kind == "queue_timeout"


def test_a_timeout_is_history_that_a_replay_reproduces(ladder, player, opponent, moderator):
    start = timezone.now() - timedelta(days=10)
    PlayerRating.objects.filter(ladder=ladder).update(rd_as_of=start, joined_at=start)
    report = SideInput([player], 1), SideInput([opponent], 2)
    match_report(ladder=ladder, reporter=moderator, sides=report, played_at=start, now=start)
    join(ladder, player, start + timedelta(days=4))
    q.queue_poll(ladder=ladder, player=player, now=start + timedelta(days=4, minutes=6))
    live = PlayerRating.objects.get(ladder=ladder, player=player)

    ladder_replay(ladder=ladder)

    replayed = PlayerRating.objects.get(ladder=ladder, player=player)
    assert (replayed.rating, replayed.rd, replayed.rd_as_of) == (live.rating, live.rd, live.rd_as_of)
    assert live.rd_as_of == start + timedelta(days=4, minutes=6)


def test_stale_entries_leave_without_the_reset_and_the_sweep_expires(ladder):
    now = timezone.now()
    quiet, patient = rated_member(ladder, "quiet", 1000), rated_member(ladder, "patient", 2400)
    join(ladder, quiet, now - timedelta(seconds=40))
    join(ladder, patient, now - timedelta(minutes=6))
    QueueEntry.objects.filter(player=patient).update(last_seen_at=now)

    stats = q.queue_sweep(now=now)

    assert stats == q.SweepStats(expired=1, left=1)
    assert QueueEntry.objects.get(player=quiet).status == EntryStatus.LEFT
    assert not RatingAdjustment.objects.filter(player=quiet).exists()
    assert QueueEntry.objects.get(player=patient).status == EntryStatus.EXPIRED
    assert q.queue_sweep(now=now) == q.SweepStats(expired=0, left=0)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("twice", "You are already searching for a match in Chess."),
        ("banned", "Your account is deactivated"),
        ("outsider", "Join Chess before searching for a match."),
        ("team", "has no queue: its games are reported after play."),
    ],
)
def test_join_refusals(ladder, setup, message):
    now = timezone.now()
    user = rated_member(ladder, "someone", 1000)
    if setup == "twice":
        join(ladder, user, now)
    elif setup == "banned":
        user.is_active = False
        user.save()
    elif setup == "outsider":
        PlayerRating.objects.filter(player=user).update(is_active=False)
    else:
        ladder.allow_one_vs_one = False
        ladder.allow_teams = True
        ladder.save()

    with pytest.raises(ValidationError, match=message):
        join(ladder, user, now)

    assert QueueEntry.objects.filter(player=user).count() == (1 if setup == "twice" else 0)


def test_leave_and_scheduled_match_takes_the_result(ladder, player, opponent):
    now = timezone.now()
    rated(ladder, player), rated(ladder, opponent)
    join(ladder, player, now)
    q.queue_leave(ladder=ladder, player=player, now=now)
    with pytest.raises(ValidationError, match="You are not searching"):
        q.queue_leave(ladder=ladder, player=player, now=now)
    assert join(ladder, opponent, now).status == EntryStatus.WAITING


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("sql_or_orm", ["sql"], indirect=True)  # the claim is the same on both
def test_concurrent_joins_never_pair_anyone_twice():
    """200 players join one ladder from 8 threads at once."""
    ladder = LadderFactory(name="Rush", rematch_cooldown_minutes=0)
    rng = random.Random(5)
    now = timezone.now()
    users = [rated_member(ladder, f"r{n:03d}", rng.uniform(1300, 1700), rng.uniform(40, 120), now) for n in range(200)]
    chunks = [users[i::8] for i in range(8)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(chunk):
        barrier.wait()
        try:
            for user in chunk:
                q.queue_join(ladder=ladder, player=user)
            for user in chunk:
                q.queue_poll(ladder=ladder, player=user)
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
    matches = list(Match.objects.filter(ladder=ladder).prefetch_related("participants"))
    paired = [p.player_id for match in matches for p in match.participants.all()]
    assert len(paired) == len(set(paired)) == 2 * len(matches) > 100
    for match in matches:
        entries = list(QueueEntry.objects.filter(match=match))
        assert len(entries) == 2 and {e.player_id for e in entries} == {p.player_id for p in match.participants.all()}
        a, b = entries
        assert a.win_probability + b.win_probability == pytest.approx(1.0)
        assert 0.15 <= a.win_probability <= 0.85
    assert QueueEntry.objects.filter(ladder=ladder, status="matched").count() == len(paired)


@pytest.mark.parametrize(
    ("starts", "ends", "lifted", "in_force"),
    [
        (-60, None, None, True),  # until lifted
        (-60, 60, None, True),
        (-60, -1, None, False),  # over
        (-60, None, -1, False),  # lifted
        (60, None, None, False),  # not begun
    ],
)
def test_a_poll_renewing_its_search_ends_it_only_for_a_suspension_in_force(ladder, starts, ends, lifted, in_force):
    """Every ``SEEN_EVERY`` a poll renews its search and checks for a suspension, in one statement on
    PostgreSQL (``sql.SEEN``) and as its ORM twin: each bound of "in force" is the ORM's."""
    from ladder.models import Suspension

    now = timezone.now()
    ann = rated_member(ladder, "ann")
    join(ladder, ann, now)
    at = now + q.SEEN_EVERY + timedelta(seconds=1)
    second = timedelta(seconds=1)
    Suspension.objects.create(
        ladder=ladder,
        player=ann,
        reason="Rude in chat.",
        starts_at=at + starts * second,
        ends_at=None if ends is None else at + ends * second,
        lifted_at=None if lifted is None else at + lifted * second,
    )

    entry = q.queue_poll(ladder=ladder, player=ann, now=at)

    stored = QueueEntry.objects.get(pk=entry.pk)
    assert stored.status == (EntryStatus.LEFT if in_force else EntryStatus.WAITING)
    assert stored.last_seen_at == (now if in_force else at)
