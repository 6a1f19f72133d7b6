"""Parties (docs/rules.md §13): every refusal, leaving, and a party's search as one unit.

Written apart from the code it checks: each test sets up a situation the party rules
forbid or decide, then reads the database, not the service's own answer alone.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder import formats
from ladder.models import MatchSide, MatchStatus, Participant
from ladder.moderation.suspensions import suspend
from matchmaking import lifecycle, parties
from matchmaking import services as q
from matchmaking.models import Block, EntryStatus, Party, PartyMember, PartyStatus, QueueEntry, QueuePenalty
from ratings.models import PlayerRating
from tests.factories import UserFactory, member, team_queue_ladder

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("sql_or_orm"),
    team_queue_ladder("1v1,2v2,ffa4", uneven=False),
]

BIG = pytest.mark.ladder(queue_formats="2v2,4v4")  # parties of up to 4


def rated_member(ladder, name, rating=1500.0, rd=60.0):
    user = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=user).update(rating=rating, rd=rd, rd_as_of=timezone.now())
    return user


def invite(ladder, leader, username, now):
    return parties.party_invite(ladder=ladder, leader=leader, username=username, now=now)


def answer(ladder, leader, player, now, accept=True):
    party = parties.current_party(ladder=ladder, player=leader)
    return parties.party_answer(party=party, player=player, accept=accept, now=now)


def make_party(ladder, leader, *others, now):
    for other in others:
        invite(ladder, leader, other.username, now)
        answer(ladder, leader, other, now)
    return parties.current_party(ladder=ladder, player=leader)


def refused(code, call, *args, **kwargs):
    with pytest.raises(ValidationError) as caught:
        call(*args, **kwargs)
    assert caught.value.code == code, caught.value.messages
    return caught.value.messages[0]


def waiting_players(ladder):
    return set(
        QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING).values_list("player__username", flat=True)
    )


# Refusals of an invitation


def test_a_party_is_never_larger_than_the_largest_team(ladder):
    now = timezone.now()
    ann, bob, cid = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    assert parties.largest_party(ladder) == 2
    invite(ladder, ann, "bob", now)
    message = refused("party_too_large", invite, ladder, ann, "cid", now)  # an open invitation counts
    assert "at most 2" in message
    answer(ladder, ann, bob, now)
    refused("party_too_large", invite, ladder, ann, "cid", now)
    assert not PartyMember.objects.filter(player=cid).exists()


def test_a_declined_invitation_frees_its_place(ladder):
    now = timezone.now()
    ann, bob, _ = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    invite(ladder, ann, "bob", now)
    answer(ladder, ann, bob, now, accept=False)
    invite(ladder, ann, "cid", now)
    assert PartyMember.objects.get(player__username="cid").status == PartyStatus.INVITED


@pytest.mark.ladder(queue_formats="1v1,ffa4")
def test_no_parties_without_team_formats(ladder):
    ann = rated_member(ladder, "ann")
    rated_member(ladder, "bob")
    refused("no_team_formats", invite, ladder, ann, "bob", timezone.now())


@pytest.mark.ladder(queue_formats="teams4", allow_uneven_teams=True)
def test_uneven_teams_allow_a_party_of_all_but_one(ladder):
    now = timezone.now()
    ann = rated_member(ladder, "ann")
    for name in ("bob", "cid", "dee"):
        rated_member(ladder, name)
    assert parties.largest_party(ladder) == 3
    invite(ladder, ann, "bob", now)
    invite(ladder, ann, "cid", now)
    refused("party_too_large", invite, ladder, ann, "dee", now)


@pytest.mark.parametrize("direction", ["leader blocked them", "they blocked the leader"])
def test_a_block_either_way_refuses_the_invitation(ladder, direction):
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    blocker, blocked = (ann, bob) if direction == "leader blocked them" else (bob, ann)
    Block.objects.create(blocker=blocker, blocked=blocked)
    refused("blocked", invite, ladder, ann, "bob", timezone.now())
    assert not PartyMember.objects.filter(player=bob).exists()


@BIG
def test_a_member_who_blocked_the_invitee_keeps_them_out(ladder):
    now = timezone.now()
    ann, bob, cid = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    make_party(ladder, ann, bob, now=now)
    Block.objects.create(blocker=bob, blocked=cid)
    refused("blocked", invite, ladder, ann, "cid", now)


def test_a_player_in_another_party_cannot_be_invited(ladder):
    now = timezone.now()
    ann, _, cid, dee = (rated_member(ladder, n) for n in ("ann", "bob", "cid", "dee"))
    make_party(ladder, cid, dee, now=now)
    refused("in_a_party", invite, ladder, ann, "dee", now)  # a member
    refused("in_a_party", invite, ladder, ann, "cid", now)  # a leader
    assert PartyMember.objects.filter(player__username="ann").count() == 0  # no empty party left behind


def test_accepting_a_second_party_is_refused(ladder):
    now = timezone.now()
    ann, bob, cid = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    invite(ladder, ann, "bob", now)
    invite(ladder, cid, "bob", now)
    answer(ladder, cid, bob, now)
    refused("in_a_party", answer, ladder, ann, bob, now)
    assert parties.current_party(ladder=ladder, player=bob).leader_id == cid.pk


def test_inviting_twice_is_refused(ladder):
    now = timezone.now()
    ann, _ = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    invite(ladder, ann, "bob", now)
    refused("already_invited", invite, ladder, ann, "BOB", now + timedelta(seconds=5))


def test_a_member_of_the_party_cannot_be_invited_again(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    make_party(ladder, ann, bob, now=now)
    refused("in_a_party", invite, ladder, ann, "bob", now)


def test_unknown_inactive_outside_and_oneself_are_refused(ladder):
    now = timezone.now()
    ann = rated_member(ladder, "ann")
    gone = rated_member(ladder, "gone")
    gone.is_active = False
    gone.save()
    UserFactory(username="stranger")
    refused("no_such_player", invite, ladder, ann, "nobody", now)
    refused("no_such_player", invite, ladder, ann, "gone", now)
    refused("not_member", invite, ladder, ann, "stranger", now)
    refused("self_invite", invite, ladder, ann, "ANN", now)
    assert not Party.objects.exists()


def test_only_the_leader_invites_and_withdraws(ladder):
    now = timezone.now()
    ann, bob, _ = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    party = make_party(ladder, ann, bob, now=now)
    refused("not_leader", invite, ladder, bob, "cid", now)
    refused("not_leader", parties.party_withdraw, party=party, leader=bob, username="cid", now=now)


@BIG
def test_a_searching_party_cannot_change(ladder):
    now = timezone.now()
    ann, bob, cid, _ = (rated_member(ladder, n) for n in ("ann", "bob", "cid", "dee"))
    party = make_party(ladder, ann, bob, now=now)
    invite(ladder, ann, "cid", now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["4v4"], now=now)
    refused("party_searching", invite, ladder, ann, "dee", now)
    refused("party_searching", parties.party_answer, party=party, player=cid, accept=True, now=now)
    assert sorted(QueueEntry.objects.filter(status=EntryStatus.WAITING).values_list("party_size", flat=True)) == [2, 2]


def test_an_expired_invitation_cannot_be_accepted(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    invite(ladder, ann, "bob", now)
    party = parties.current_party(ladder=ladder, player=ann)
    late = now + parties.PARTY_INVITE_TTL
    refused("no_invitation", parties.party_answer, party=party, player=bob, accept=True, now=late)
    assert parties.current_party(ladder=ladder, player=bob) is None
    assert parties.invitations_for(ladder=ladder, player=bob, now=late) == []
    # just inside the time it still counts
    parties.party_answer(party=party, player=bob, accept=True, now=late - timedelta(seconds=1))
    assert parties.current_party(ladder=ladder, player=bob) == party


def test_a_declined_or_withdrawn_invitation_cannot_be_accepted(ladder):
    now = timezone.now()
    ann, bob, cid = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    invite(ladder, ann, "bob", now)
    party = parties.current_party(ladder=ladder, player=ann)
    parties.party_answer(party=party, player=bob, accept=False, now=now)
    refused("no_invitation", parties.party_answer, party=party, player=bob, accept=True, now=now)
    invite(ladder, ann, "cid", now)
    parties.party_withdraw(party=party, leader=ann, username="cid", now=now)
    refused("no_invitation", parties.party_answer, party=party, player=cid, accept=True, now=now)
    refused("no_invitation", parties.party_withdraw, party=party, leader=ann, username="cid", now=now)
    assert parties.party_view(party, now).members[0].player == ann and parties.party_view(party, now).size == 1


def test_leaving_without_a_party_is_refused(ladder):
    ann = rated_member(ladder, "ann")
    refused("not_in_party", parties.party_leave, ladder=ladder, player=ann, now=timezone.now())


# Leaving


def test_the_leader_leaving_ends_the_party_and_its_search(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    party = make_party(ladder, ann, bob, now=now)
    q.queue_join(ladder=ladder, player=bob, formats_wanted=["2v2"], now=now)
    assert waiting_players(ladder) == {"ann", "bob"}
    parties.party_leave(ladder=ladder, player=ann, now=now)
    assert waiting_players(ladder) == set()
    party.refresh_from_db()
    assert party.ended_at == now
    assert parties.current_party(ladder=ladder, player=bob) is None
    assert parties.current_party(ladder=ladder, player=ann) is None
    entry = q.queue_join(ladder=ladder, player=bob, formats_wanted=["1v1"], now=now + timedelta(seconds=1))
    assert entry.party_id is None and entry.party_size == 1  # bob searches alone now


def test_a_member_leaving_ends_the_search_not_the_party(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    party = make_party(ladder, ann, bob, now=now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"], now=now)
    parties.party_leave(ladder=ladder, player=bob, now=now)
    assert waiting_players(ladder) == set()
    party.refresh_from_db()
    assert party.ended_at is None and parties.current_party(ladder=ladder, player=ann) == party
    assert parties.current_party(ladder=ladder, player=bob) is None


def test_the_leader_leaving_withdraws_open_invitations(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    invite(ladder, ann, "bob", now)
    party = parties.current_party(ladder=ladder, player=ann)
    parties.party_leave(ladder=ladder, player=ann, now=now)
    refused("no_invitation", parties.party_answer, party=party, player=bob, accept=True, now=now)


# The party's search


@BIG
def test_a_party_searches_all_together_or_not_at_all(ladder):
    now = timezone.now()
    ann, bob, cid = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    make_party(ladder, ann, bob, cid, now=now)
    suspend(ladder=ladder, player=cid, reason="Rude in chat.", ends_at=None, by=None, now=now - timedelta(hours=1))
    message = refused("suspended", q.queue_join, ladder=ladder, player=ann, formats_wanted=["4v4"], now=now)
    assert "cid" in message
    assert not QueueEntry.objects.exists()


def test_an_inactive_member_stops_the_party_search(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    make_party(ladder, ann, bob, now=now)
    bob.is_active = False
    bob.save()
    message = refused("banned", q.queue_join, ladder=ladder, player=ann, formats_wanted=["2v2"], now=now)
    assert "bob" in message
    assert not QueueEntry.objects.exists()


def test_any_member_leaving_the_queue_takes_the_whole_party_out(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    make_party(ladder, ann, bob, now=now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"], now=now)
    q.queue_leave(ladder=ladder, player=bob, now=now)
    assert waiting_players(ladder) == set()
    assert set(QueueEntry.objects.values_list("status", flat=True)) == {EntryStatus.LEFT}


def test_a_party_never_plays_against_itself(ladder):
    """The fairest split would part ann and bob (equal strengths crosswise); the party keeps them together."""
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann", 1800), rated_member(ladder, "bob", 1500)
    make_party(ladder, ann, bob, now=now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"], now=now)
    rated_member(ladder, "cid", 1800)
    q.queue_join(ladder=ladder, player=rated_member(ladder, "cid2", 1800), formats_wanted=["2v2"], now=now)
    entry = q.queue_join(ladder=ladder, player=rated_member(ladder, "dee", 1500), formats_wanted=["2v2"], now=now)
    assert entry.status == EntryStatus.MATCHED
    sides = {
        p.player.username: p.side.index for p in Participant.objects.filter(match=entry.match).select_related("player")
    }
    assert sides["ann"] == sides["bob"]
    assert len(sides) == 4 and sorted(sides.values()) == [0, 0, 1, 1]


# A missed ready check


def form_two_v_two_with_party(ladder, now):
    """ann and bob (a party) against cid and dee; the match in its ready check."""
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    cid, dee = rated_member(ladder, "cid"), rated_member(ladder, "dee")
    make_party(ladder, ann, bob, now=now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"], now=now - timedelta(seconds=40))
    q.queue_join(ladder=ladder, player=cid, formats_wanted=["2v2", "ffa4"], now=now - timedelta(seconds=20))
    entry = q.queue_join(ladder=ladder, player=dee, formats_wanted=["2v2"], now=now)
    assert entry.status == EntryStatus.MATCHED and entry.match.status == MatchStatus.READY_CHECK
    return entry.match, (ann, bob, cid, dee)


def test_a_party_whose_member_missed_the_ready_check_is_not_requeued(ladder):
    now = timezone.now()
    match, (ann, bob, cid, dee) = form_two_v_two_with_party(ladder, now)
    # ann pressed Ready, bob did not (the player's own mark); cid and dee pressed
    Participant.objects.filter(match=match, player=ann).update(ready_at=now)
    lifecycle.ready(match=match, user=cid, now=now)
    lifecycle.ready(match=match, user=dee, now=now)
    assert MatchSide.objects.filter(match=match, participants__player=ann).get().ready_at is None
    swept = match.ready_deadline + timedelta(seconds=1)
    lifecycle.sweep_matches(now=swept)
    match.refresh_from_db()
    assert match.status == MatchStatus.CANCELLED
    assert waiting_players(ladder) == {"cid", "dee"}
    back = QueueEntry.objects.get(player=cid, status=EntryStatus.WAITING)
    assert back.formats == formats.mask(["2v2", "ffa4"]) and back.party_id is None
    assert back.requeued_after_id == match.pk
    assert list(QueuePenalty.objects.values_list("player", flat=True)) == [bob.pk]  # bob, and only bob, missed it
    assert back.joined_at == now - timedelta(seconds=20)  # the 20 s before the game and the ready check count on


def test_one_press_does_not_make_a_whole_team_ready(ladder):
    now = timezone.now()
    match, (ann, bob, cid, dee) = form_two_v_two_with_party(ladder, now)
    lifecycle.ready(match=match, user=ann, now=now)  # bob never presses
    lifecycle.ready(match=match, user=cid, now=now)
    lifecycle.ready(match=match, user=dee, now=now)
    match.refresh_from_db()
    assert match.status == MatchStatus.READY_CHECK
    lifecycle.sweep_matches(now=match.ready_deadline + timedelta(seconds=1))
    assert waiting_players(ladder) == {"cid", "dee"}
    assert list(QueuePenalty.objects.values_list("player", flat=True)) == [bob.pk]


def test_a_ready_party_returns_to_the_queue_together_and_plays_together(ladder):
    now = timezone.now()
    match, (ann, bob, cid, dee) = form_two_v_two_with_party(ladder, now)
    lifecycle.ready(match=match, user=ann, now=now)
    lifecycle.ready(match=match, user=bob, now=now)
    lifecycle.ready(match=match, user=dee, now=now)  # cid did not press
    swept = match.ready_deadline + timedelta(seconds=1)
    lifecycle.sweep_matches(now=swept)
    assert waiting_players(ladder) == {"ann", "bob", "dee"}
    assert list(QueuePenalty.objects.values_list("player", flat=True)) == [cid.pk]
    party = parties.current_party(ladder=ladder, player=ann)
    back = QueueEntry.objects.filter(player__in=[ann, bob], status=EntryStatus.WAITING)
    assert {(e.party_id, e.party_size, e.formats) for e in back} == {(party.pk, 2, formats.mask(["2v2"]))}
    later = swept + timedelta(seconds=1)
    entry = q.queue_join(ladder=ladder, player=rated_member(ladder, "eve"), formats_wanted=["2v2"], now=later)
    assert entry.status == EntryStatus.MATCHED and entry.match_id != match.pk
    sides = dict(Participant.objects.filter(match=entry.match).values_list("player__username", "side__index"))
    assert set(sides) == {"ann", "bob", "dee", "eve"} and sides["ann"] == sides["bob"]


def test_a_party_join_must_name_the_players_own_party(ladder):
    now = timezone.now()
    ann, bob, cid, dee = (rated_member(ladder, n) for n in ("ann", "bob", "cid", "dee"))
    make_party(ladder, ann, bob, now=now)
    other = make_party(ladder, cid, dee, now=now)
    refused("not_in_party", q.queue_join, ladder=ladder, player=ann, formats_wanted=["2v2"], party=other.pk, now=now)
    refused("not_in_party", q.queue_join, ladder=ladder, player=rated_member(ladder, "eve"), party=other.pk, now=now)
    assert not QueueEntry.objects.exists()


@BIG
def test_a_party_larger_than_a_format_cannot_search_it(ladder):
    now = timezone.now()
    ann, bob, cid = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    make_party(ladder, ann, bob, cid, now=now)
    message = refused(
        "party_too_large", q.queue_join, ladder=ladder, player=bob, formats_wanted=["2v2", "4v4"], now=now
    )
    assert "3" in message
    assert not QueueEntry.objects.exists()
    entry = q.queue_join(ladder=ladder, player=bob, now=now)  # no formats: those the party fits
    assert entry.formats == formats.mask(["4v4"]) and entry.party_size == 3


@BIG
def test_four_v_four_keeps_parties_of_three_and_two_whole(ladder):
    now = timezone.now()
    users = {name: rated_member(ladder, name, 1500 + 10 * n) for n, name in enumerate("abcdefgh")}
    make_party(ladder, users["a"], users["b"], users["c"], now=now)
    make_party(ladder, users["d"], users["e"], now=now)
    make_party(ladder, users["f"], users["g"], now=now)
    q.queue_join(ladder=ladder, player=users["a"], formats_wanted=["4v4"], now=now)
    q.queue_join(ladder=ladder, player=users["d"], formats_wanted=["4v4"], now=now)
    q.queue_join(ladder=ladder, player=users["f"], formats_wanted=["4v4"], now=now)
    entry = q.queue_join(ladder=ladder, player=users["h"], formats_wanted=["4v4"], now=now)
    assert entry.status == EntryStatus.MATCHED
    sides = dict(Participant.objects.filter(match=entry.match).values_list("player__username", "side__index"))
    assert len({sides[n] for n in "abc"}) == len({sides[n] for n in "de"}) == len({sides[n] for n in "fg"}) == 1
    assert sides["a"] != sides["d"] == sides["f"]  # 3 + 1 against 2 + 2
    assert sides["h"] == sides["a"]


def test_one_member_gone_stale_ends_the_whole_party_search(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    make_party(ladder, ann, bob, now=now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"], now=now)
    QueueEntry.objects.filter(player=ann).update(last_seen_at=now + timedelta(seconds=25))  # ann keeps polling
    q.queue_sweep(now=now + q.STALE_AFTER + timedelta(seconds=1))
    assert waiting_players(ladder) == set()


def test_a_member_suspended_while_searching_ends_the_party_search(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    make_party(ladder, ann, bob, now=now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"], now=now)
    suspend(ladder=ladder, player=bob, reason="Rude in chat.", ends_at=None, by=None, now=now + timedelta(seconds=1))
    later = now + q.SEEN_EVERY + timedelta(seconds=2)
    assert q.queue_poll(ladder=ladder, player=bob, now=later).status == EntryStatus.LEFT
    assert waiting_players(ladder) == set()


@pytest.mark.parametrize("who", ["leader", "invitee"])
def test_a_player_searching_alone_cannot_enter_a_party(ladder, who):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    q.queue_join(ladder=ladder, player=ann if who == "leader" else bob, formats_wanted=["2v2"], now=now)
    try:
        invite(ladder, ann, "bob", now)
        answer(ladder, ann, bob, now)
    except ValidationError:
        return  # refused: right
    in_party_and_alone = QueueEntry.objects.filter(status=EntryStatus.WAITING, party=None)
    assert not in_party_and_alone.exists(), "a party member searches alone"


def test_a_party_search_expires_for_every_member_at_once(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    make_party(ladder, ann, bob, now=now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2"], now=now)
    later = now + timedelta(seconds=ladder.queue_timeout_seconds + 1)
    q.queue_poll(ladder=ladder, player=ann, now=later)
    assert set(QueueEntry.objects.values_list("status", flat=True)) == {EntryStatus.EXPIRED}
    again = q.queue_join(ladder=ladder, player=bob, formats_wanted=["2v2"], now=later)  # not "already searching"
    assert again.status == EntryStatus.WAITING and waiting_players(ladder) == {"ann", "bob"}


def test_the_leader_sees_what_became_of_each_invitation(ladder):
    now = timezone.now()
    ann, bob, cid = (rated_member(ladder, n) for n in ("ann", "bob", "cid"))
    invite(ladder, ann, "bob", now)
    answer(ladder, ann, bob, now, accept=False)
    invite(ladder, ann, "cid", now)
    party = parties.current_party(ladder=ladder, player=ann)
    parties.party_withdraw(party=party, leader=ann, username="cid", now=now)
    invite(ladder, ann, "cid", now + timedelta(seconds=1))  # invited again, then left unanswered
    later = now + parties.PARTY_INVITE_TTL + timedelta(seconds=2)
    view = parties.party_view(party, later)
    assert [(row.player.username, how) for row, how in view.answered] == [
        ("bob", "declined"),
        ("cid", "invitation expired"),
    ]
    assert view.invited == []
    parties.party_leave(ladder=ladder, player=ann, now=later)  # ending the party withdraws what is still invited
    assert PartyMember.objects.get(player=cid).status == PartyStatus.WITHDRAWN
