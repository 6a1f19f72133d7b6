"""The queue pairs marked accounts only with each other (docs/rules.md §15, "Marks").

Each rule runs through the hand-written SQL and its ORM twin (``sql_or_orm``).
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from ladder.models import MarkKind, MatchSide, Participant
from ladder.moderation import marks
from matchmaking import services as q
from matchmaking.models import EntryStatus
from ratings.models import PlayerRating
from tests.factories import member, team_queue_ladder

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sql_or_orm")]


def rated_member(ladder, name, rating=1500.0):
    user = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=user).update(rating=rating, rd=60.0, rd_as_of=timezone.now())
    return user


def join(ladder, user, now, formats=None):
    return q.queue_join(ladder=ladder, player=user, formats_wanted=formats, now=now)


def mark(user, moderator, kind=MarkKind.BOOSTER):
    return marks.mark_player(player=user, kind=kind, note="Feeds others.", by=moderator, now=timezone.now())


def test_a_marked_account_is_not_paired_with_an_unmarked_one(ladder, moderator):
    now = timezone.now()
    ann, ben = rated_member(ladder, "ann"), rated_member(ladder, "ben", 1510)
    mark(ann, moderator)
    join(ladder, ann, now)

    assert join(ladder, ben, now).status == EntryStatus.WAITING


def test_an_unmarked_search_skips_a_nearer_marked_one(ladder, moderator):
    now = timezone.now()
    ann, ben, cid = rated_member(ladder, "ann"), rated_member(ladder, "ben", 1505), rated_member(ladder, "cid", 1600)
    mark(ben, moderator)
    join(ladder, ben, now)
    join(ladder, cid, now)  # waits: ben is marked

    entry = join(ladder, ann, now)

    assert entry.status == EntryStatus.MATCHED and entry.opponent == cid


def test_marked_accounts_are_paired_with_each_other(ladder, moderator):
    now = timezone.now()
    ann, ben, cid = rated_member(ladder, "ann"), rated_member(ladder, "ben", 1505), rated_member(ladder, "cid", 1510)
    mark(ann, moderator)
    mark(cid, moderator, kind=MarkKind.OTHER_ACCOUNT)
    join(ladder, ann, now)
    assert join(ladder, ben, now).status == EntryStatus.WAITING

    entry = join(ladder, cid, now)

    assert entry.status == EntryStatus.MATCHED and entry.opponent == ann


def test_a_lifted_mark_pairs_as_before(ladder, moderator):
    now = timezone.now()
    ann, ben = rated_member(ladder, "ann"), rated_member(ladder, "ben", 1510)
    marks.mark_lift(mark=mark(ann, moderator), note="Cleared.", by=moderator, now=now)
    join(ladder, ann, now)

    assert join(ladder, ben, now).status == EntryStatus.MATCHED


def players_of(match):
    return {
        p.player.username
        for side in MatchSide.objects.filter(match=match)
        for p in Participant.objects.filter(side=side).select_related("player")
    }


@team_queue_ladder("2v2")
def test_a_team_game_never_mixes_marked_and_unmarked_accounts(ladder, moderator):
    now = timezone.now()
    players = [rated_member(ladder, name) for name in ("ann", "ben", "cid", "dee", "eve")]
    mark(players[0], moderator)

    for user in players[:4]:
        entry = join(ladder, user, now, ["2v2"])
    assert entry.status == EntryStatus.WAITING  # ann may not play with the three others: four is not enough
    entry = join(ladder, players[4], now, ["2v2"])

    assert entry.status == EntryStatus.MATCHED
    assert players_of(entry.match) == {"ben", "cid", "dee", "eve"}


@team_queue_ladder("2v2")
def test_four_marked_accounts_form_a_team_game(ladder, moderator):
    now = timezone.now()
    players = [rated_member(ladder, name) for name in ("ann", "ben", "cid", "dee", "eve")]
    for user in players[1:]:
        mark(user, moderator)

    for user in players[:4]:
        entry = join(ladder, user, now, ["2v2"])
    assert entry.status == EntryStatus.WAITING
    entry = join(ladder, players[4], now, ["2v2"])

    assert entry.status == EntryStatus.MATCHED
    assert players_of(entry.match) == {"ben", "cid", "dee", "eve"}
