"""What the snapshots show: rank changes on the leaderboard, the movers box, rank history."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from ladder.models import LeaderboardSnapshot, SnapshotEntry
from ladder.standings.nightly import leaderboard_snapshot, local_midnight
from ladder.standings.snapshots import RankChange, ladder_movers
from ratings.models import PlayerRating
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db


def ranked_member(ladder, user, rating: float) -> PlayerRating:
    now = timezone.now()
    return PlayerRating.objects.create(
        ladder=ladder,
        player=user,
        rating=rating,
        rd=60,
        volatility=0.06,
        rd_as_of=now - timedelta(hours=1),
        games=20,
        wins=10,
        losses=10,
        last_played_at=now - timedelta(hours=1),
    )


def snap(ladder, day: date, players: list, *, ranked_count: int | None = None) -> LeaderboardSnapshot:
    """A snapshot holding ``players`` at ranks 1, 2, … (built directly: the pages only read it)."""
    snapshot = LeaderboardSnapshot.objects.create(
        ladder=ladder,
        date=day,
        midnight=timezone.now(),
        taken_at=timezone.now(),
        scale=ladder.leaderboard_scale,
        size=ladder.snapshot_size,
        member_count=len(players),
        ranked_count=len(players) if ranked_count is None else ranked_count,
        provisional_count=0,
    )
    SnapshotEntry.objects.bulk_create(
        SnapshotEntry(snapshot=snapshot, rank=rank, player=player, rating=1500, rd=60, value=50.0)
        for rank, player in enumerate(players, start=1)
    )
    return snapshot


def cells(html: str) -> dict[str, str]:
    """Each leaderboard row's player name → its rank-change cell text."""
    found = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S):
        name = re.search(r'/players/([^/]+)/">', row)
        change = re.search(r'<td class="move-col">(.*?)</td>', row, re.S)
        if name and change:
            label = re.search(r'aria-hidden="true">([^<]*)</span>', change.group(1))
            found[name.group(1)] = label.group(1) if label else ""
    return found


def test_leaderboard_shows_each_players_rank_change_since_the_latest_snapshot(client):
    ladder = LadderFactory()
    ann, ben, cy, dot = bulk_users("p", 4)
    for user, rating in ((ann, 1700), (ben, 1800), (cy, 1600), (dot, 1650)):
        ranked_member(ladder, user, rating)
    yesterday = timezone.localdate() - timedelta(days=1)
    snap(ladder, yesterday - timedelta(days=1), [cy, ann, ben])  # older: ignored
    snap(ladder, yesterday, [ann, ben, cy])  # dot was not ranked then

    response = client.get(ladder.get_absolute_url())

    assert cells(response.text) == {ben.username: "▲1", ann.username: "▼1", dot.username: "new", cy.username: "▼1"}
    assert f"Up 1 place since {yesterday.day} {yesterday:%b} (was #2)" in response.text
    assert "rank change since the snapshot at midnight" in response.text


def test_rank_change_is_left_blank_below_a_partial_snapshots_top_n(client):
    ladder = LadderFactory(snapshot_size=2)
    users = bulk_users("q", 4)
    for user, rating in zip(users, (1800, 1700, 1600, 1500), strict=True):
        ranked_member(ladder, user, rating)
    snap(ladder, timezone.localdate(), [users[0], users[2]], ranked_count=4)  # the top 2 of 4 then

    changes = {
        row.rating.player_id: row.change for row in client.get(ladder.get_absolute_url()).context["leaderboard"].ranked
    }

    assert changes[users[0].pk].label == "–"
    assert changes[users[1].pk].label == "new"  # now #2: within the snapshot's top 2, and not in it
    assert changes[users[2].pk].label == "▼1"
    assert changes[users[3].pk] is None  # now #4: where was it? the snapshot does not say


def test_no_snapshot_no_change_column(client):
    ladder = LadderFactory()
    ranked_member(ladder, bulk_users("r", 1)[0], 1600)
    response = client.get(ladder.get_absolute_url())
    assert 'class="move-col"' not in response.text
    assert "Biggest climbers" not in response.text


def test_leaderboard_query_count_with_snapshots_does_not_grow(client, django_assert_max_num_queries):
    ladder = LadderFactory()
    first = bulk_users("s", 5)
    for n, user in enumerate(first):
        ranked_member(ladder, user, 1500 + n)
    snap(ladder, timezone.localdate() - timedelta(days=8), first)
    snap(ladder, timezone.localdate(), list(reversed(first)))
    with django_assert_max_num_queries(11) as few:  # 7, snapshot and its entries, movers' base and climbers
        client.get(ladder.get_absolute_url())
    for n, user in enumerate(bulk_users("t", 30)):
        ranked_member(ladder, user, 1400 + n)
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get(ladder.get_absolute_url())


def test_movers_are_the_biggest_climbers_of_the_last_seven_days(client):
    ladder = LadderFactory()
    users = bulk_users("m", 8)
    today = timezone.localdate()
    snap(ladder, today - timedelta(days=9), list(reversed(users)))  # too old
    snap(ladder, today - timedelta(days=7), users[:7])  # the base: u7 was not in it
    snap(ladder, today - timedelta(days=3), users)
    snap(ladder, today, [users[6], users[7], users[3], users[0], users[1], users[2], users[4], users[5]])

    movers = ladder_movers(ladder=ladder)
    response = client.get(ladder.get_absolute_url())

    assert movers.since == today - timedelta(days=7) and movers.until == today
    assert [(m.player, m.previous, m.rank) for m in movers.climbers] == [(users[6], 7, 1), (users[3], 4, 3)]
    box = response.text[response.text.index("Biggest climbers") :]
    assert "last 7 days" in box
    assert box.index(users[6].username) < box.index(users[3].username)
    assert "#7 → #1" in box and "▲6" in box


def test_movers_compare_with_the_oldest_snapshot_until_a_week_has_passed(client):
    ladder = LadderFactory()
    users = bulk_users("n", 3)
    today = timezone.localdate()
    snap(ladder, today - timedelta(days=2), users)
    snap(ladder, today, [users[2], users[0], users[1]])

    response = client.get(ladder.get_absolute_url())

    assert f"since {(today - timedelta(days=2)).day} {today - timedelta(days=2):%b}" in response.text
    assert [m.player for m in response.context["movers"].climbers] == [users[2]]


def test_movers_are_read_once_a_snapshot_and_follow_a_new_one(client):
    ladder = LadderFactory()
    users = bulk_users("c", 3)
    today = timezone.localdate()
    snap(ladder, today - timedelta(days=2), users)
    snap(ladder, today, [users[2], users[0], users[1]])
    assert "#3 → #1" in client.get(ladder.get_absolute_url()).text

    with CaptureQueriesContext(connection) as queries:
        again = client.get(ladder.get_absolute_url())
    assert "#3 → #1" in again.text
    assert not [q for q in queries.captured_queries if "ladder_snapshotentry" in q["sql"]]
    # kept without what a page does not show: no password hash or e-mail address in the cache
    kept = again.context["movers"].climbers[0].player
    assert kept.username == users[2].username and {"password", "email"}.isdisjoint(vars(kept))

    LeaderboardSnapshot.objects.filter(ladder=ladder, date=today).delete()  # taken again, as the nightly job does
    snap(ladder, today, [users[1], users[2], users[0]])
    with time_machine.travel(timezone.now() + timedelta(seconds=10)):  # past the leaderboard's cache period
        moved = client.get(ladder.get_absolute_url()).text
    assert "#3 → #1" not in moved and "#2 → #1" in moved


def test_movers_need_two_snapshots():
    ladder = LadderFactory()
    assert ladder_movers(ladder=ladder) is None
    snap(ladder, timezone.localdate(), bulk_users("o", 2))
    assert ladder_movers(ladder=ladder) is None


def test_player_page_shows_rank_history_with_gaps(client):
    ladder = LadderFactory()
    me, other = bulk_users("h", 2)
    ranked_member(ladder, me, 1600)
    today = timezone.localdate()
    snap(ladder, today - timedelta(days=5), [other, me])
    snap(ladder, today - timedelta(days=4), [me, other])
    snap(ladder, today - timedelta(days=3), [other])  # not ranked that night: a gap
    snap(ladder, today - timedelta(days=2), [other, me])

    response = client.get(reverse("ladder:player", args=[ladder.slug, me.username]))

    text = response.text
    chart = text[text.index('class="chart rank-wide') :]
    chart = chart[: chart.index("</svg>")]
    assert 'data-points="3"' in chart
    path = re.search(r'<path class="line" d="([^"]+)"', chart).group(1)
    assert path.count("M") == 2 and path.count("L") == 1  # two days joined, then a gap
    best = today - timedelta(days=4)
    assert f"Best #1 · {best.day} {best:%b %Y}" in text
    assert [point.rank for point in response.context["standing"].ranks] == [2, 1, 2]


def test_player_page_without_rank_history_says_how_it_comes(client):
    ladder = LadderFactory(snapshot_size=500)
    me = bulk_users("e", 1)[0]
    ranked_member(ladder, me, 1500)
    response = client.get(reverse("ladder:player", args=[ladder.slug, me.username]))
    assert "No rank recorded yet" in response.text
    assert "top 500 ranked players" in response.text


def test_a_real_nightly_snapshot_feeds_the_leaderboard(client):
    ladder = LadderFactory()
    users = bulk_users("z", 3)
    for user, rating in zip(users, (1500, 1600, 1700), strict=True):
        ranked_member(ladder, user, rating)
    leaderboard_snapshot(ladder=ladder, midnight=local_midnight(ladder=ladder, at=timezone.now()))
    PlayerRating.objects.filter(player=users[0]).update(rating=1800)

    assert cells(client.get(ladder.get_absolute_url()).text) == {
        users[0].username: "▲2",
        users[2].username: "▼1",
        users[1].username: "▼1",
    }


@pytest.mark.parametrize(
    ("previous", "rank", "label", "tone", "title"),
    [
        (5, 2, "▲3", "up", "Up 3 places since 2 Mar (was #5)"),
        (1, 2, "▼1", "down", "Down 1 place since 2 Mar (was #1)"),
        (4, 4, "–", "same", "Same rank as on 2 Mar"),
        (None, 9, "new", "new", "New: not ranked on 2 Mar"),
    ],
)
def test_rank_change_words(previous, rank, label, tone, title):
    change = RankChange(rank=rank, previous=previous, since=date(2026, 3, 2))
    assert (change.label, change.tone, change.title) == (label, tone, title)
