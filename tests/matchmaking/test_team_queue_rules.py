"""The team and free-for-all queue's rules (docs/rules.md §13, "Forming a game"), checked on
random and hand-built queues with code written here: windows, cooldown, blocks, uneven
teams, newcomers, the optimal split (a brute force over every partition), and the requeue
after a missed ready check.
"""

from __future__ import annotations

import random
from datetime import timedelta
from itertools import combinations

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder import formats
from ladder.models import Match, MatchSide, MatchStatus, Participant
from matchmaking import lifecycle, parties
from matchmaking import services as q
from matchmaking.models import Block, EntryStatus, QueueEntry
from ratings.engines import RatingState, composite, rating_difference_for_probability, win_probability
from ratings.engines.teams import pad
from ratings.models import PlayerRating
from tests.factories import member, team_queue_ladder
from tests.matchmaking.played import played

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("sql_or_orm"),
    team_queue_ladder("2v2,teams4,teams5,ffa4", window=0.02),
]


def rated_member(ladder, name, rating=1500.0, rd=60.0, when=None):
    user = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=user).update(
        rating=rating, rd=rd, rd_as_of=when or timezone.now()
    )
    return user


def join(ladder, user, now, codes, **kwargs):
    return q.queue_join(ladder=ladder, player=user, formats_wanted=codes, now=now, **kwargs)


def players_by_side(match):
    sides: dict[int, list[int]] = {}
    for side_index, player in Participant.objects.filter(match=match).values_list("side__index", "player_id"):
        sides.setdefault(side_index, []).append(player)
    return [sorted(sides[index]) for index in sorted(sides)]


def rd_now(ladder, entry, at):
    state = RatingState(entry.rating, entry.rd, entry.volatility, entry.rd_as_of.timestamp())
    return ladder.get_engine().rd_at(state, at.timestamp())


def p_min(ladder, waited):
    """The window's lowest win chance after ``waited``, from the ladder's three settings."""
    widened = ladder.queue_min_win_probability - ladder.queue_widening_per_minute * waited.total_seconds() / 60
    return max(widened, ladder.queue_widest_min_win_probability)


def window_gap(ladder, entry, at):
    gap = abs(
        rating_difference_for_probability(p_min(ladder, at - entry.joined_at), rd_now(ladder, entry, at), ladder.rd_max)
    )
    return gap if entry.max_rating_gap is None else min(gap, entry.max_rating_gap)


def team_p(team_a, team_b, ladder):
    """P(team a wins) from the team rules (§8): pad the smaller team with null players, composites, §2."""
    params = ladder.get_engine().params
    size = max(len(team_a), len(team_b))
    comps = []
    for team in (team_a, team_b):
        ratings, rds = pad(
            [r for r, _ in team],
            [d for _, d in team],
            size,
            null_rating=params.null_rating,
            null_rd=params.null_player_rd,
        )
        comps.append(composite(ratings, rds))
    return win_probability(*comps[0], *comps[1])


def oracle_unfairness(units, ladder, *, uneven):
    """The least |P − ½| over every split of ``units`` (lists of (rating, rd)) into two teams."""
    best = None
    indexes = range(len(units))
    total = sum(len(u) for u in units)
    for k in range(1, len(units)):
        for chosen in combinations(indexes, k):
            a = [m for i in chosen for m in units[i]]
            b = [m for i in indexes if i not in chosen for m in units[i]]
            if not uneven and len(a) != len(b):
                continue
            if len(a) > total - 1 or len(b) > total - 1:
                continue
            score = abs(team_p(a, b, ladder) - 0.5)
            best = score if best is None else min(best, score)
    return best


# Windows, limits and blocks on random queues


@pytest.mark.ladder(
    queue_min_win_probability=0.3, queue_widest_min_win_probability=0.3, queue_formats="2v2,ffa4,teams4"
)
@pytest.mark.parametrize("seed", [1, 2])
def test_every_pair_in_a_formed_game_is_inside_both_windows(ladder, seed):
    rng = random.Random(seed)
    now = timezone.now()
    users = []
    for n in range(40):
        user = rated_member(ladder, f"p{n:02d}", rng.uniform(1300, 1700), rng.uniform(40, 160), now)
        users.append(user)
    codes = [["2v2"], ["ffa4"], ["teams4"], ["2v2", "ffa4"], ["2v2", "teams4", "ffa4"]]
    blocks = set()
    for _ in range(8):
        a, b = rng.sample(users, 2)
        Block.objects.get_or_create(blocker=a, blocked=b)
        blocks.add(frozenset((a.pk, b.pk)))
    for user in users:
        gap = rng.choice([None, None, 60, 150])
        join(ladder, user, now, rng.choice(codes), max_rating_gap=gap)
    matches = list(Match.objects.filter(ladder=ladder))
    assert len(matches) >= 3
    for match in matches:
        entries = list(QueueEntry.objects.filter(match=match))
        size = formats.FORMATS[match.queue_format].players
        assert len(entries) == size
        for x, y in combinations(entries, 2):
            assert frozenset((x.player_id, y.player_id)) not in blocks
            gap = abs(x.rating - y.rating)
            assert gap <= window_gap(ladder, x, match.played_at) + 1e-6, (match.queue_format, x, y)
            assert gap <= window_gap(ladder, y, match.played_at) + 1e-6, (match.queue_format, x, y)
        for chance in MatchSide.objects.filter(match=match).values_list("win_probability", flat=True):
            if match.queue_format != "ffa4":
                assert 0.3 - 1e-9 <= chance <= 0.7 + 1e-9  # the game is inside every player's window


def test_a_block_between_two_units_keeps_them_apart(ladder):
    """dee blocked bob, a member (not the leader) of ann's party: whoever anchors, they never meet."""
    now = timezone.now()
    ann, bob = rated_member(ladder, "ann"), rated_member(ladder, "bob")
    cid, dee, eve = rated_member(ladder, "cid"), rated_member(ladder, "dee"), rated_member(ladder, "eve")
    parties.party_invite(ladder=ladder, leader=ann, username="bob", now=now)
    parties.party_answer(party=parties.current_party(ladder=ladder, player=ann), player=bob, accept=True, now=now)
    Block.objects.create(blocker=dee, blocked=bob)
    join(ladder, dee, now - timedelta(seconds=30), ["2v2"])  # dee waited longest
    join(ladder, ann, now - timedelta(seconds=20), ["2v2"])
    join(ladder, cid, now - timedelta(seconds=10), ["2v2"])
    join(ladder, eve, now, ["2v2"])
    for user in (ann, bob, cid, dee, eve):
        q.queue_poll(ladder=ladder, player=user, now=now + timedelta(seconds=1))
    matches = list(Match.objects.filter(ladder=ladder))
    assert len(matches) == 1  # ann, bob, cid and eve
    for match in matches:
        players = {p for side in players_by_side(match) for p in side}
        assert not {bob.pk, dee.pk} <= players


# Rematch cooldown


@pytest.mark.ladder(rematch_cooldown_minutes=30)
def test_the_rematch_cooldown_holds_for_team_games(ladder):
    now = timezone.now()
    first = [rated_member(ladder, name) for name in ("ann", "bob", "cid", "dee")]
    for user in first:
        entry = join(ladder, user, now, ["2v2"])
    assert entry.status == EntryStatus.MATCHED
    played(entry.match, now)
    later = now + timedelta(minutes=1)
    for user in first:
        join(ladder, user, later, ["2v2"])
    assert not QueueEntry.objects.filter(status=EntryStatus.MATCHED, ended_at=later).exists()
    for name in ("eve", "fay", "gus", "hal"):
        join(ladder, rated_member(ladder, name), later, ["2v2"])
    played_again = [m for m in Match.objects.filter(ladder=ladder, created_at__gt=now) if m.pk != entry.match_id]
    assert played_again  # eve, fay, gus and one of the first four
    first_ids = {user.pk for user in first}
    for match in played_again:
        together = {p for side in players_by_side(match) for p in side} & first_ids
        assert len(together) <= 1, "two of the first game's players met again inside the cooldown"


# Uneven teams


@pytest.mark.ladder(allow_uneven_teams=False, queue_formats="2v2,teams4")
def test_without_uneven_teams_a_split_format_stays_even(ladder):
    now = timezone.now()
    join(ladder, rated_member(ladder, "ace", 1900), now, ["teams4"])
    for name in ("b1", "b2", "b3"):
        entry = join(ladder, rated_member(ladder, name, 1500), now, ["teams4"])
    assert entry.status == EntryStatus.MATCHED
    assert sorted(len(side) for side in players_by_side(entry.match)) == [2, 2]


def test_with_uneven_teams_the_fairer_uneven_split_is_taken(ladder):
    """One strong player against three weaker ones is fairer than any 2 v 2 of these four."""
    now = timezone.now()
    join(ladder, rated_member(ladder, "ace", 2100), now, ["teams4"])
    for name in ("b1", "b2", "b3"):
        entry = join(ladder, rated_member(ladder, name, 1500), now, ["teams4"])
    ratings = [(2100.0, 60.0)] + [(1500.0, 60.0)] * 3
    even = min(
        abs(team_p([ratings[0], r], [x for x in ratings[1:] if x is not r][:2], ladder) - 0.5) for r in ratings[1:]
    )
    uneven = oracle_unfairness([[r] for r in ratings], ladder, uneven=True)
    assert uneven < even  # the situation the test needs
    assert sorted(len(side) for side in players_by_side(entry.match)) == [1, 3]


def test_even_formats_never_split_unevenly_even_when_allowed(ladder):
    now = timezone.now()
    join(ladder, rated_member(ladder, "ace", 2100), now, ["2v2"])
    for name in ("b1", "b2", "b3"):
        entry = join(ladder, rated_member(ladder, name, 1500), now, ["2v2"])
    assert sorted(len(side) for side in players_by_side(entry.match)) == [2, 2]


@pytest.mark.ladder(allow_uneven_teams=False, queue_formats="2v2,teams3")
def test_teams_of_three_are_impossible_without_uneven_teams(ladder):
    assert [f.code for f in ladder.queue_format_list] == ["2v2"]
    with pytest.raises(ValidationError) as refused:
        ladder.full_clean()
    assert "queue_formats" in refused.value.message_dict
    with pytest.raises(ValidationError) as refused:
        join(ladder, rated_member(ladder, "ann"), timezone.now(), ["teams3"])
    assert refused.value.code == "bad_format"


# Newcomers


def test_newcomers_are_grouped_with_newcomers_first(ladder):
    now = timezone.now()
    for name in ("old1", "old2", "old3"):  # they waited longest
        join(ladder, rated_member(ladder, name, 1500, rd=50), now - timedelta(seconds=20), ["2v2"])
    for name in ("new1", "new2", "new3"):
        assert join(ladder, rated_member(ladder, name, 1500, rd=250), now, ["2v2"]).status == EntryStatus.WAITING
    entry = join(ladder, rated_member(ladder, "new4", 1500, rd=250), now, ["2v2"])
    assert entry.status == EntryStatus.MATCHED
    names = set(Participant.objects.filter(match=entry.match).values_list("player__username", flat=True))
    assert names == {"new1", "new2", "new3", "new4"}


def test_a_party_with_a_newcomer_counts_as_new(ladder):
    now = timezone.now()
    vet, kid = rated_member(ladder, "vet", 1500, rd=50), rated_member(ladder, "kid", 1500, rd=250)
    parties.party_invite(ladder=ladder, leader=vet, username="kid", now=now)
    parties.party_answer(party=parties.current_party(ladder=ladder, player=vet), player=kid, accept=True, now=now)
    join(ladder, vet, now, ["2v2"])
    join(ladder, rated_member(ladder, "old1", 1500, rd=50), now, ["2v2"])
    entry = join(ladder, rated_member(ladder, "old2", 1500, rd=50), now, ["2v2"])
    assert entry.status == EntryStatus.WAITING  # old players do not meet the party in its first minute
    later = now + timedelta(seconds=61)
    QueueEntry.objects.filter(status=EntryStatus.WAITING).update(last_seen_at=later)
    entry = q.queue_poll(ladder=ladder, player=vet, now=later)
    assert entry.status == EntryStatus.MATCHED


# The split is the optimum of every partition


@pytest.mark.parametrize("seed", range(6))
def test_the_formed_split_is_the_brute_force_optimum(ladder, seed):
    rng = random.Random(100 + seed)
    now = timezone.now()
    code, size = rng.choice([("2v2", 4), ("teams4", 4), ("teams5", 5)])
    uneven = code != "2v2"
    with_party = size >= 4 and rng.random() < 0.5
    users = [
        rated_member(ladder, f"s{seed}n{n}", rng.uniform(1350, 1750), rng.uniform(40, 95), now) for n in range(size)
    ]
    if with_party:
        leader, mate = users[0], users[1]
        parties.party_invite(ladder=ladder, leader=leader, username=mate.username, now=now)
        parties.party_answer(
            party=parties.current_party(ladder=ladder, player=leader), player=mate, accept=True, now=now
        )
        joiners = users[1:]
    else:
        joiners = users
    for user in joiners:
        entry = join(ladder, user, now, [code])
    assert entry.status == EntryStatus.MATCHED, "four or five players in each other's windows make a game"
    match = entry.match
    entries = {e.player_id: e for e in QueueEntry.objects.filter(match=match)}
    at = match.played_at
    member_of = {pk: (e.rating, rd_now(ladder, e, at)) for pk, e in entries.items()}
    if with_party:
        units = [[member_of[users[0].pk], member_of[users[1].pk]]] + [[member_of[u.pk]] for u in users[2:]]
    else:
        units = [[member_of[u.pk]] for u in users]
    best = oracle_unfairness(units, ladder, uneven=uneven)
    sides = players_by_side(match)
    chance = MatchSide.objects.get(match=match, index=0).win_probability
    formed = team_p([member_of[p] for p in sides[0]], [member_of[p] for p in sides[1]], ladder)
    assert chance == pytest.approx(formed, abs=1e-9)
    assert abs(formed - 0.5) <= best + 1e-9
    for index, side in enumerate(sides):  # each search keeps its own side's chance
        own = MatchSide.objects.get(match=match, index=index).win_probability
        assert {entries[player].win_probability for player in side} == {own}
    if with_party:
        assert any({users[0].pk, users[1].pk} <= set(side) for side in sides)


# A missed ready check


def test_a_missed_ready_check_requeues_the_others_with_their_formats_and_time(ladder):
    now = timezone.now()
    names = ("ann", "bob", "cid", "dee")
    users = {name: rated_member(ladder, name) for name in names}
    waited = {"ann": 50, "bob": 30, "cid": 10, "dee": 0}
    wanted = {"ann": ["ffa4", "2v2"], "bob": ["ffa4"], "cid": ["ffa4", "teams5"], "dee": ["ffa4"]}
    for name in names:
        entry = join(ladder, users[name], now - timedelta(seconds=waited[name]), wanted[name])
    match = entry.match
    assert match.queue_format == "ffa4" and match.status == MatchStatus.READY_CHECK
    for name in ("ann", "bob", "cid"):
        lifecycle.ready(match=match, user=users[name], now=now)
    swept = match.ready_deadline + timedelta(seconds=5)
    lifecycle.sweep_matches(now=swept)
    back = {
        e.player.username: e for e in QueueEntry.objects.filter(status=EntryStatus.WAITING).select_related("player")
    }
    assert set(back) == {"ann", "bob", "cid"}
    for name, entry in back.items():
        assert entry.formats == formats.mask(wanted[name])
        assert entry.joined_at == now - timedelta(seconds=waited[name])  # and the ready check counts on
    assert not QueueEntry.objects.filter(player=users["dee"], status=EntryStatus.WAITING).exists()


@pytest.mark.ladder(queue_min_win_probability=0.4, queue_widest_min_win_probability=0.05, queue_widening_per_minute=0.2)
def test_windows_widen_with_waiting_time_for_team_games(ladder):
    now = timezone.now()
    far = rated_member(ladder, "far", 1850)
    join(ladder, far, now, ["2v2"])
    for name in ("ann", "bob", "cid"):
        join(ladder, rated_member(ladder, name, 1500), now, ["2v2"])
    soon = now + timedelta(seconds=15)
    QueueEntry.objects.update(last_seen_at=soon)
    assert q.queue_poll(ladder=ladder, player=far, now=soon).status == EntryStatus.WAITING
    later = now + timedelta(minutes=2)
    QueueEntry.objects.update(last_seen_at=later)
    entry = q.queue_poll(ladder=ladder, player=far, now=later)
    assert entry.status == EntryStatus.MATCHED
    entries = list(QueueEntry.objects.filter(match=entry.match))
    for x, y in combinations(entries, 2):
        assert abs(x.rating - y.rating) <= min(window_gap(ladder, x, later), window_gap(ladder, y, later)) + 1e-6
    assert abs(1850 - 1500) > window_gap(ladder, entries[0], soon)  # the game was out of the window at first
