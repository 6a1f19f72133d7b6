"""Team and free-for-all games formed by the queue (docs/rules.md §13, "Forming a game").

Every rule runs on both ways of running the queue's statements (``sql_or_orm``). The
fairest split is checked against an oracle written here from the team rules (§8), not
with the balance module the queue uses.
"""

from __future__ import annotations

from datetime import timedelta
from itertools import combinations

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder import formats
from ladder.models import MatchSide, MatchStatus, Participant
from matchmaking import parties
from matchmaking import services as q
from matchmaking.models import Block, EntryStatus, QueueEntry
from ratings.engines import composite, win_probability
from ratings.models import PlayerRating
from tests.factories import member, team_queue_ladder

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("sql_or_orm"),
    team_queue_ladder("1v1,2v2,teams3,ffa4,4v4"),
]


def rated_member(ladder, name, rating=1500.0, rd=60.0):
    user = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=user).update(rating=rating, rd=rd, rd_as_of=timezone.now())
    return user


def join(ladder, user, now, formats=None, **kwargs):
    return q.queue_join(ladder=ladder, player=user, formats_wanted=formats, now=now, **kwargs)


def teams_of(match):
    """Each side's usernames, sorted, in side order."""
    sides = []
    for side in MatchSide.objects.filter(match=match).order_by("index"):
        sides.append(sorted(p.player.username for p in Participant.objects.filter(side=side)))
    return sides


def oracle_p(team_a, team_b):
    """P(team a wins) from the team rules alone: equal sizes here, so no padding."""
    ra, rda = composite([r for r, _ in team_a], [d for _, d in team_a])
    rb, rdb = composite([r for r, _ in team_b], [d for _, d in team_b])
    return win_probability(ra, rda, rb, rdb)


def test_four_searchers_of_two_v_two_form_the_fairest_split(ladder):
    now = timezone.now()
    ratings = {"ann": 1900.0, "bob": 1500.0, "cid": 1650.0, "dee": 1720.0}
    users = {name: rated_member(ladder, name, rating) for name, rating in ratings.items()}
    for offset, name in enumerate(["ann", "bob", "cid"]):
        entry = join(ladder, users[name], now - timedelta(seconds=30 - offset), ["2v2"])
        assert entry.status == EntryStatus.WAITING

    entry = join(ladder, users["dee"], now, ["2v2"])

    assert entry.status == EntryStatus.MATCHED
    match = entry.match
    assert match.queue_format == "2v2" and match.paired_by_queue and match.status == MatchStatus.READY_CHECK
    sides = teams_of(match)
    best = min(
        (abs(oracle_p([(ratings[n], 60.0) for n in a], [(ratings[n], 60.0) for n in set(ratings) - set(a)]) - 0.5), a)
        for a in combinations(sorted(ratings), 2)
        if "ann" in a
    )
    assert sorted(sides[0] if "ann" in sides[0] else sides[1]) == sorted(best[1])
    chances = list(MatchSide.objects.filter(match=match).order_by("index").values_list("win_probability", flat=True))
    assert chances[0] + chances[1] == pytest.approx(1.0)
    team_a = [(ratings[n], 60.0) for n in sides[0]]
    team_b = [(ratings[n], 60.0) for n in sides[1]]
    assert chances[0] == pytest.approx(oracle_p(team_a, team_b), abs=1e-3)  # RDs grew a little since
    assert set(QueueEntry.objects.values_list("status", flat=True)) == {EntryStatus.MATCHED}


def test_three_searchers_do_not_make_a_two_v_two(ladder):
    now = timezone.now()
    for name in ("ann", "bob", "cid"):
        entry = join(ladder, rated_member(ladder, name), now, ["2v2"])
    assert entry.status == EntryStatus.WAITING
    assert QueueEntry.objects.filter(status=EntryStatus.WAITING).count() == 3


def test_free_for_all_of_four_puts_each_player_on_a_side(ladder):
    now = timezone.now()
    for name, rating in (("ann", 1500), ("bob", 1540), ("cid", 1480), ("dee", 1510)):
        entry = join(ladder, rated_member(ladder, name, rating), now, ["ffa4"])
    match = entry.match
    assert match.queue_format == "ffa4"
    assert [len(side) for side in teams_of(match)] == [1, 1, 1, 1]
    chances = MatchSide.objects.filter(match=match).values_list("win_probability", flat=True)
    assert sum(chances) == pytest.approx(2.0)  # each one's mean chance against the others: n/2 in all


def test_uneven_teams_of_three_pad_the_single_player(ladder):
    now = timezone.now()
    join(ladder, rated_member(ladder, "strong", 1900), now, ["teams3"])
    join(ladder, rated_member(ladder, "weak1", 1500), now, ["teams3"])
    entry = join(ladder, rated_member(ladder, "weak2", 1500), now, ["teams3"])
    assert entry.status == EntryStatus.MATCHED
    assert sorted(teams_of(entry.match), key=len) == [["strong"], ["weak1", "weak2"]]


def test_a_party_plays_on_one_team(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann", 2000), rated_member(ladder, "bob", 2000)
    parties.party_invite(ladder=ladder, leader=ann, username="bob", now=now)
    party = parties.current_party(ladder=ladder, player=ann)
    parties.party_answer(party=party, player=bob, accept=True, now=now)
    join(ladder, ann, now, ["2v2"])
    assert QueueEntry.objects.get(player=bob).status == EntryStatus.WAITING  # the party searches together
    join(ladder, rated_member(ladder, "cid", 2000), now, ["2v2"])
    entry = join(ladder, rated_member(ladder, "dee", 2000), now, ["2v2"])
    assert entry.status == EntryStatus.MATCHED
    assert sorted(teams_of(entry.match)) == [["ann", "bob"], ["cid", "dee"]]


def test_a_party_cannot_search_one_v_one_or_free_for_all(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    parties.party_invite(ladder=ladder, leader=ann, username="bob", now=now)
    parties.party_answer(party=parties.current_party(ladder=ladder, player=ann), player=bob, accept=True, now=now)
    for code in ("1v1", "ffa4"):
        with pytest.raises(ValidationError) as refused:
            join(ladder, bob, now, [code])
        assert refused.value.code == "party_too_large"
    entry = join(ladder, bob, now)  # no formats: those the party fits
    assert entry.formats == formats.mask(["2v2", "teams3", "4v4"])  # a party of 2 fits a 1 v 2 side too


def test_blocked_players_are_never_in_one_game(ladder):
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    Block.objects.create(blocker=ann, blocked=bob)
    for user in (ann, bob, rated_member(ladder, "cid"), rated_member(ladder, "dee")):
        join(ladder, user, now, ["2v2"])
    assert not QueueEntry.objects.filter(status=EntryStatus.MATCHED).exists()
    entry = join(ladder, rated_member(ladder, "eve"), now, ["2v2"])
    players = {p for side in teams_of(entry.match) for p in side}
    assert not {"ann", "bob"} <= players and len(players) == 4


def test_a_player_out_of_every_window_is_left_waiting(ladder):
    now = timezone.now()
    join(ladder, rated_member(ladder, "far", 2600), now, ["2v2"])
    for name in ("ann", "bob", "cid"):
        entry = join(ladder, rated_member(ladder, name, 1500), now, ["2v2"])
    assert entry.status == EntryStatus.WAITING
    entry = join(ladder, rated_member(ladder, "dee", 1500), now, ["2v2"])
    assert "far" not in {p for side in teams_of(entry.match) for p in side}
    assert QueueEntry.objects.get(player__username="far").status == EntryStatus.WAITING


def test_the_first_game_formed_takes_a_player_out_of_every_format(ladder):
    now = timezone.now()
    for name in ("ann", "bob", "cid"):
        join(ladder, rated_member(ladder, name), now, ["2v2"])
    both = join(ladder, rated_member(ladder, "dee"), now - timedelta(seconds=1), ["1v1"])
    assert both.status == EntryStatus.WAITING
    entry = join(ladder, rated_member(ladder, "eve"), now, ["1v1", "2v2"])
    assert entry.status == EntryStatus.MATCHED and entry.match.queue_format == "1v1"  # 1 v 1 is tried first
    assert QueueEntry.objects.filter(player__username="eve").get().status == EntryStatus.MATCHED


def test_a_format_the_ladder_does_not_offer_is_refused(ladder):
    with pytest.raises(ValidationError) as refused:
        join(ladder, rated_member(ladder, "ann"), timezone.now(), ["3v3"])
    assert refused.value.code == "bad_format" and "3 v 3" in refused.value.messages[0]
    with pytest.raises(ValidationError) as refused:
        join(ladder, rated_member(ladder, "bob"), timezone.now(), [])
    assert refused.value.code == "no_format"


def test_newcomers_meet_newcomers_first(ladder):
    now = timezone.now()
    for name in ("old1", "old2", "old3"):
        join(ladder, rated_member(ladder, name, 1500, rd=50), now, ["2v2"])
    fresh = join(ladder, rated_member(ladder, "new1", 1500, rd=300), now, ["2v2"])
    assert fresh.status == EntryStatus.WAITING  # a provisional player waits for provisional ones at first
    later = now + timedelta(seconds=90)
    for name in ("old1", "old2", "old3", "new1"):
        QueueEntry.objects.filter(player__username=name).update(last_seen_at=later)
    entry = q.queue_poll(ladder=ladder, player=fresh.player, now=later)
    assert entry.status == EntryStatus.MATCHED  # after a minute, anyone in the windows
