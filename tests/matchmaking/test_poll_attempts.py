"""A poll skips its attempt to pair when nobody it could meet arrived since its last (``matchmaking.attempts``).

The searches put in the queue by hand (``waiting``) arrive without a join, so no poll is
told of them: only the retry bound (``RETRY``) or a join's arrival makes a poll try.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from matchmaking import attempts, forming
from matchmaking import services as q
from matchmaking.models import Block, EntryStatus, QueueEntry
from ratings.models import PlayerRating
from tests.factories import member, other_connection, team_queue_ladder, waiting

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sql_or_orm")]

SECOND = timedelta(seconds=1)


def rated_member(ladder, name, rating=1500.0, rd=60.0):
    user = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=user).update(rating=rating, rd=rd, rd_as_of=timezone.now())
    return user


def poll(ladder, user, now):
    return q.queue_poll(ladder=ladder, player=user, now=now)


def test_a_poll_skips_until_the_retry_bound_when_nobody_arrived(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob", 1520.0)
    q.queue_join(ladder=ladder, player=ann, now=now)
    assert poll(ladder, ann, now + SECOND).status == EntryStatus.WAITING  # tried: nobody there
    waiting(ladder, bob, now + SECOND)  # in reach, but no join told anyone

    skipped = poll(ladder, ann, now + 2 * SECOND)
    tried = poll(ladder, ann, now + SECOND + attempts.RETRY)

    assert skipped.status == EntryStatus.WAITING
    assert tried.status == EntryStatus.MATCHED and tried.opponent_id == bob.pk


def test_a_join_whose_window_reaches_the_searcher_makes_its_next_poll_try(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob", 1520.0)
    cid, far = rated_member(ladder, "cid", 1510.0), rated_member(ladder, "far", 4000.0)
    for blocked in (ann, bob):  # cid's join forms nothing, but its window covers ann's rating
        Block.objects.create(blocker=cid, blocked=blocked)
    q.queue_join(ladder=ladder, player=ann, now=now)
    poll(ladder, ann, now + SECOND)
    waiting(ladder, bob, now + SECOND)

    q.queue_join(ladder=ladder, player=far, now=now + SECOND)  # far away: ann's band is not stamped
    after_far = poll(ladder, ann, now + 2 * SECOND)
    q.queue_join(ladder=ladder, player=cid, now=now + 2 * SECOND)
    after_cid = poll(ladder, ann, now + 3 * SECOND)

    assert after_far.status == EntryStatus.WAITING
    assert after_cid.status == EntryStatus.MATCHED and after_cid.opponent_id == bob.pk


@team_queue_ladder("1v1,2v2")
def test_a_skipped_poll_still_shows_the_players_found(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob", 1520.0)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"], now=now)
    q.queue_join(ladder=ladder, player=bob, formats_wanted=["2v2"], now=now)

    tried = poll(ladder, ann, now + SECOND)
    skipped = poll(ladder, ann, now + 2 * SECOND)

    assert forming.found_so_far(tried) == forming.found_so_far(skipped) == {"2v2": 2}
    assert forming.found_so_far(QueueEntry.objects.get(pk=tried.pk)) == {"2v2": 2}  # as the API reads it


def test_a_poll_that_rewinds_the_clock_tries(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob", 1520.0)
    q.queue_join(ladder=ladder, player=ann, now=now)
    poll(ladder, ann, now + 5 * SECOND)
    waiting(ladder, bob, now)

    assert poll(ladder, ann, now + SECOND).status == EntryStatus.MATCHED


@pytest.mark.django_db(transaction=True)
def test_an_attempt_that_lost_its_claim_is_tried_again_at_the_next_poll(ladder):
    """Bob's search is locked by another connection (as if another process were placing him), so ann's
    claim skips it; the next poll must try again rather than wait for the retry bound."""
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob", 1520.0)
    q.queue_join(ladder=ladder, player=ann, now=now)
    poll(ladder, ann, now + SECOND)
    bobs = waiting(ladder, bob, now + SECOND)
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with other_connection() as other, other.transaction():
            other.execute("SELECT id FROM matchmaking_queueentry WHERE id = %s FOR UPDATE", [bobs.pk])
            locked.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        lost = poll(ladder, ann, now + SECOND + attempts.RETRY)
    finally:
        release.set()
        holder.join()
    again = poll(ladder, ann, now + 2 * SECOND + attempts.RETRY)

    assert lost.status == EntryStatus.WAITING
    assert again.status == EntryStatus.MATCHED and again.opponent_id == bob.pk


def test_a_player_put_back_after_a_missed_ready_check_is_an_arrival(ladder, django_capture_on_commit_callbacks):
    """Cid searched while ann and bob were at their ready check; bob missed it, so ann searches again,
    and cid's next poll pairs them rather than waiting for the retry bound."""
    from matchmaking import lifecycle

    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob", 1520.0)
    cid = rated_member(ladder, "cid", 1510.0)
    q.queue_join(ladder=ladder, player=ann, now=now)
    paired = q.queue_join(ladder=ladder, player=bob, now=now)
    lifecycle.ready(match=paired.match, user=ann, now=now + SECOND)
    deadline = paired.match.ready_deadline
    q.queue_join(ladder=ladder, player=cid, now=deadline - 2 * SECOND)
    poll(ladder, cid, deadline - SECOND)  # tried: nobody waiting

    with django_capture_on_commit_callbacks(execute=True):
        again = poll(ladder, ann, deadline + SECOND)  # settles the check: ann searches again
    cids = poll(ladder, cid, deadline + 2 * SECOND)

    assert again.status == EntryStatus.WAITING and again.requeued_after_id == paired.match_id
    assert cids.status == EntryStatus.MATCHED and cids.opponent_id == ann.pk


def test_a_search_started_again_tries_at_its_first_poll(ladder):
    """The search row (and so its last attempt's record) is reused when a player searches again; the
    new search's arrival stamps its own band, so that record cannot let its first poll skip."""
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob", 1520.0)
    first = q.queue_join(ladder=ladder, player=ann, now=now)
    poll(ladder, ann, now + SECOND)
    q.queue_leave(ladder=ladder, player=ann, now=now + 2 * SECOND)
    again = q.queue_join(ladder=ladder, player=ann, now=now + 8 * SECOND)
    waiting(ladder, bob, now + 8 * SECOND)

    polled = poll(ladder, ann, now + 9 * SECOND)

    assert again.pk == first.pk  # the same row, searching again
    assert polled.status == EntryStatus.MATCHED and polled.opponent_id == bob.pk
