"""The queue keeps accounts that signed in from one address apart when the ladder says so (docs/rules.md §13).

Players sign in through the login form (``REMOTE_ADDR``), then search. Each rule runs through
the hand-written SQL and its ORM twin (``sql_or_orm``).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import SignInPrint
from ladder.models import MatchSide, Participant
from matchmaking import services as q
from matchmaking.models import EntryStatus
from ratings.models import PlayerRating
from tests.factories import PASSWORD, member, team_queue_ladder

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sql_or_orm")]
APART = pytest.mark.ladder(queue_separate_shared_addresses=True)


def sign_in(user, ip):
    response = Client().post(
        reverse("accounts:login"), {"username": user.username, "password": PASSWORD}, REMOTE_ADDR=ip
    )
    assert response.status_code == 302


def rated_member(ladder, name, rating=1500.0):
    user = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=user).update(rating=rating, rd=60.0, rd_as_of=timezone.now())
    return user


def join(ladder, user, now, formats=None):
    return q.queue_join(ladder=ladder, player=user, formats_wanted=formats, now=now)


def test_keeping_apart_is_off_by_default(ladder):
    now = timezone.now()
    ann, ben = rated_member(ladder, "ann"), rated_member(ladder, "ben")
    sign_in(ann, "198.51.100.7")
    sign_in(ben, "198.51.100.7")

    join(ladder, ann, now)

    assert join(ladder, ben, now).status == EntryStatus.MATCHED


@APART
def test_accounts_from_one_address_are_not_paired_and_others_are(ladder):
    now = timezone.now()
    ann, ben, cid = rated_member(ladder, "ann"), rated_member(ladder, "ben", 1510), rated_member(ladder, "cid", 1600)
    sign_in(ann, "198.51.100.7")
    sign_in(ben, "198.51.100.7")
    sign_in(cid, "203.0.113.1")
    join(ladder, ann, now)

    # ben is within ann's window, but shares her address: he waits; cid, from elsewhere, meets one of them.
    assert join(ladder, ben, now).status == EntryStatus.WAITING
    entry = join(ladder, cid, now)
    assert entry.status == EntryStatus.MATCHED and entry.opponent in (ann, ben)


@APART
def test_an_address_shared_more_than_90_days_ago_keeps_nobody_apart(ladder):
    now = timezone.now()
    ann, ben = rated_member(ladder, "ann"), rated_member(ladder, "ben")
    sign_in(ann, "198.51.100.7")
    sign_in(ben, "198.51.100.7")
    SignInPrint.objects.filter(user=ben).update(last_seen=now - timedelta(days=91))
    join(ladder, ann, now)

    assert join(ladder, ben, now).status == EntryStatus.MATCHED


@team_queue_ladder("2v2")
@pytest.mark.ladder(queue_separate_shared_addresses=True)
def test_a_team_game_never_holds_two_accounts_from_one_address(ladder):
    now = timezone.now()
    players = [rated_member(ladder, name) for name in ("ann", "ben", "cid", "dee", "eve")]
    sign_in(players[0], "198.51.100.7")
    sign_in(players[1], "198.51.100.7")
    for n, user in enumerate(players[2:]):
        sign_in(user, f"203.0.113.{n + 1}")

    for user in players[:4]:
        entry = join(ladder, user, now, ["2v2"])
    assert entry.status == EntryStatus.WAITING  # ann and ben may not be in one game: four is not enough
    entry = join(ladder, players[4], now, ["2v2"])

    assert entry.status == EntryStatus.MATCHED
    names = {
        p.player.username
        for side in MatchSide.objects.filter(match=entry.match)
        for p in Participant.objects.filter(side=side).select_related("player")
    }
    assert len(names) == 4 and not {"ann", "ben"} <= names
