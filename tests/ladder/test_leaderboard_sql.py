"""The leaderboard ranked in PostgreSQL gives the Python ranking's pages, row for row.

``ladder_leaderboard`` and ``player_standing`` rank in SQL on PostgreSQL and in Python on
other databases, and the API pages through a whole ranking cached once
(``ladder_order``, ``ladder_leaderboard_in_order``); here all of them run on the same
varied ladders (every engine and scale, provisional, idle, inactive and left members,
bots, ties, searches, pages) and must agree on counts, order, ranks, RDs, display values,
reasons and rank changes.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from core import db
from ladder.models import LeaderboardScale, LeaderboardSnapshot, SnapshotEntry
from ladder.pages.players import player_standing
from ladder.standings.leaderboard import Leaderboard, ladder_leaderboard, ladder_leaderboard_in_order
from ladder.standings.leaderboard_sql import ORDER_ROW, LeaderboardOrder, ladder_order
from ratings.models import PlayerRating
from tests.factories import LadderFactory

pytestmark = pytest.mark.django_db

LADDERS = [
    {"engine": "tgr", "leaderboard_scale": LeaderboardScale.GXE},
    {"engine": "glicko1", "leaderboard_scale": LeaderboardScale.TR, "glicko_c": 41.3, "rating_period_days": 0.7},
    {"engine": "glicko2", "leaderboard_scale": LeaderboardScale.CONSERVATIVE, "rating_period_days": 2.5},
    {"engine": "elo", "leaderboard_scale": LeaderboardScale.GXE, "ranked_max_idle_days": 0},
    {"engine": "tgr", "leaderboard_scale": LeaderboardScale.TR, "show_provisional": False, "ranked_min_games": 0},
]


def varied(ladder, rng: random.Random, count: int = 160) -> None:
    """Members of every kind: settled, provisional, few games, idle, never played, bots, left, tied."""
    now = timezone.now()
    users = User.objects.bulk_create(
        User(username=f"{rng.choice(['Ann', 'bob', 'CY', 'dot'])}{n:03d}", password="!", is_bot=n % 7 == 0)
        for n in range(count)
    )
    rows = []
    for n, user in enumerate(users):
        if rng.random() < 0.5:  # settled: ranked unless the ladder's rules say otherwise
            rows.append(
                PlayerRating(
                    ladder=ladder, player=user, rating=1600.0 if n % 11 == 0 else rng.gauss(1500, 250),
                    rd=rng.uniform(30, 80), volatility=0.06, rd_as_of=now - timedelta(hours=rng.uniform(0, 5)),
                    games=30, last_played_at=now - timedelta(hours=1), joined_at=now - timedelta(days=100),
                )
            )  # fmt: skip
            continue
        played = rng.choice([None, now - timedelta(days=rng.uniform(0, 60)), now - timedelta(hours=1)])
        rows.append(
            PlayerRating(
                ladder=ladder,
                player=user,
                rating=1600.0 if n % 11 == 0 else rng.gauss(1500, 250),  # ties on rating
                rd=rng.choice([60.0, rng.uniform(30, 120), rng.uniform(120, ladder.rd_max)]),
                volatility=rng.uniform(0.03, 0.2),
                rd_as_of=now - timedelta(days=rng.choice([0, rng.uniform(0, 90)])),
                games=rng.choice([0, 2, 5, 30]),
                last_played_at=played,
                joined_at=now - timedelta(days=100),
                is_active=n % 13 != 5,
            )
        )
    PlayerRating.objects.bulk_create(rows)


def rows(board: Leaderboard) -> list[tuple]:
    return [
        (row.rank, row.rating.pk, row.rd_now, row.shown, row.score, row.reasons, row.change)
        for row in (*board.ranked, *board.provisional)
    ]


def summary(board: Leaderboard) -> tuple:
    page = board.page
    return (
        board.member_count,
        board.ranked_count,
        board.unranked_count,
        page.number,
        page.paginator.count,
        page.paginator.num_pages,
        board.since,
    )


def both(monkeypatch, **kwargs) -> tuple[Leaderboard, Leaderboard]:
    in_sql = ladder_leaderboard(**kwargs)
    with monkeypatch.context() as patch:
        patch.setattr(db, "_orm_forced", True)
        in_python = ladder_leaderboard(**kwargs)
    return in_sql, in_python


@pytest.mark.parametrize("settings", LADDERS, ids=lambda s: f"{s['engine']}-{s['leaderboard_scale']}")
def test_sql_ranking_pages_match_the_python_ranking(monkeypatch, settings):
    ladder = LadderFactory(**settings)
    rng = random.Random(str(settings))
    varied(ladder, rng)
    now = timezone.now() + timedelta(hours=3)  # every clock behind: RDs grow
    board, _ = both(monkeypatch, ladder=ladder, now=now, per_page=1000)
    ranked = [row.rating.player_id for row in board.ranked[:30]]
    snapshot = LeaderboardSnapshot.objects.create(
        ladder=ladder, date=now.date(), midnight=now, taken_at=now, scale=ladder.leaderboard_scale, size=20,
        member_count=0, ranked_count=len(board.ranked), provisional_count=0,
    )  # fmt: skip
    SnapshotEntry.objects.bulk_create(
        SnapshotEntry(snapshot=snapshot, rank=rank, player_id=player, rating=1500, rd=60, value=50.0)
        for rank, player in enumerate(reversed(ranked[1:21]), start=1)  # ranked[0]: new
    )
    ladder = type(ladder).objects.get(pk=ladder.pk)  # forget the cached latest snapshot
    cases = [{"page": page} for page in (1, 2, 3, 4, 99, 0, -1, "x", None)]
    cases += [{"query": "ann"}, {"query": "B"}, {"query": "nobody"}, {"bots": "only"}, {"bots": "hide", "page": 2}]
    cases += [{"query": "cy", "bots": "hide", "page": 2}, {"per_page": 7, "page": 5}]
    for case in cases:
        in_sql, in_python = both(monkeypatch, ladder=ladder, now=now, **{"per_page": 25, **case})
        assert summary(in_sql) == summary(in_python), case
        assert rows(in_sql) == rows(in_python), case
    assert board.ranked and board.ranked_count > 20
    assert board.unranked_count > 20
    first, _ = both(monkeypatch, ladder=ladder, now=now)
    assert {row.change.tone for row in first.ranked if row.change} >= {"up", "down", "new"}


def test_sql_ranking_of_an_empty_ladder(monkeypatch):
    ladder = LadderFactory()
    in_sql, in_python = both(monkeypatch, ladder=ladder, now=timezone.now(), page=3)
    assert summary(in_sql) == summary(in_python) == (0, 0, 0, 1, 0, 1, None)
    assert rows(in_sql) == rows(in_python) == []


@pytest.mark.parametrize("settings", LADDERS[:3], ids=lambda s: s["engine"])
def test_player_standing_row_matches_the_python_ranking(monkeypatch, settings):
    ladder = LadderFactory(**settings)
    varied(ladder, random.Random(7), count=60)
    now = timezone.now()
    for rating in PlayerRating.objects.filter(ladder=ladder).select_related("player")[:40]:
        in_sql = player_standing(ladder=ladder, player=rating.player, now=now)
        with monkeypatch.context() as patch:
            patch.setattr(db, "_orm_forced", True)
            in_python = player_standing(ladder=ladder, player=rating.player, now=now)
        expected = in_python.row
        assert (in_sql.row.rank, in_sql.row.rd_now, in_sql.row.shown, in_sql.row.reasons) == (
            expected.rank,
            expected.rd_now,
            expected.shown,
            expected.reasons,
        )


def in_order(order: LeaderboardOrder, **kwargs) -> Leaderboard:
    return ladder_leaderboard_in_order(order=order, **kwargs)


@pytest.mark.parametrize("settings", LADDERS, ids=lambda s: f"{s['engine']}-{s['leaderboard_scale']}")
def test_pages_of_the_cached_ranking_match_the_sql_and_python_rankings(monkeypatch, settings):
    ladder = LadderFactory(**settings)
    varied(ladder, random.Random(str(settings)))
    now = timezone.now() + timedelta(hours=3)
    board, _ = both(monkeypatch, ladder=ladder, now=now, per_page=1000)
    snapshot = LeaderboardSnapshot.objects.create(
        ladder=ladder, date=now.date(), midnight=now, taken_at=now, scale=ladder.leaderboard_scale, size=20,
        member_count=0, ranked_count=len(board.ranked), provisional_count=0,
    )  # fmt: skip
    SnapshotEntry.objects.bulk_create(
        SnapshotEntry(snapshot=snapshot, rank=rank, player_id=row.rating.player_id, rating=1500, rd=60, value=50.0)
        for rank, row in enumerate(reversed(board.ranked[1:21]), start=1)
    )
    ladder = type(ladder).objects.get(pk=ladder.pk)
    order = ladder_order(ladder=ladder, now=now)
    assert (order.ladder_id, order.at, order.members, order.ranked) == (
        ladder.pk,
        now,
        board.member_count,
        board.ranked_count,
    )
    assert len(order.rows) == order.shown * ORDER_ROW.size
    boundary = board.ranked_count  # the first unranked row's index, when the ladder shows them
    cases = [{"page": page} for page in (1, 2, 3, 4, 99, 0, -1, "x", None)]
    cases += [{"per_page": 7, "page": boundary // 7 + 1}, {"per_page": 7, "page": boundary // 7}]
    cases += [{"per_page": 1, "page": boundary}, {"per_page": 1, "page": boundary + 1}, {"per_page": 1000}]
    for case in cases:
        kwargs = {"ladder": ladder, "per_page": 25, **case}
        in_sql, in_python = both(monkeypatch, now=now, **kwargs)
        paged = in_order(order, **kwargs)
        assert summary(paged) == summary(in_sql) == summary(in_python), case
        assert rows(paged) == rows(in_sql) == rows(in_python), case
        assert [row.rating.player.username for row in (*paged.ranked, *paged.provisional)] == [
            row.rating.player.username for row in (*in_sql.ranked, *in_sql.provisional)
        ]
    straddling = in_order(order, ladder=ladder, per_page=7, page=boundary // 7 + 1)
    assert straddling.ranked and (straddling.provisional or not ladder.show_provisional)
    assert board.ranked_count > 20 and board.unranked_count > 20


def test_cached_ranking_of_an_empty_ladder():
    ladder = LadderFactory()
    order = ladder_order(ladder=ladder, now=timezone.now())
    assert (order.members, order.ranked, order.shown, order.rows) == (0, 0, 0, b"")
    paged = in_order(order, ladder=ladder, page=3)
    assert summary(paged) == (0, 0, 0, 1, 0, 1, None) and rows(paged) == []


def test_cached_ranking_shows_the_values_it_ranked():
    ladder = LadderFactory(engine="tgr", ranked_max_idle_days=0, ranked_min_games=0)
    varied(ladder, random.Random(3), count=40)
    now = timezone.now()
    order = ladder_order(ladder=ladder, now=now)
    before = in_order(order, ladder=ladder, per_page=10)
    top = before.ranked[0].rating
    PlayerRating.objects.filter(pk=top.pk).update(rating=100.0, rd=30.0, games=99)  # rated since
    PlayerRating.objects.filter(pk=before.ranked[1].rating.pk).delete()  # gone since
    after = in_order(order, ladder=ladder, per_page=10)
    assert after.ranked[0].rank == 1 and after.ranked[0].rating.pk == top.pk
    assert (after.ranked[0].rating.rating, after.ranked[0].rd_now, after.ranked[0].shown) == (
        top.rating,
        before.ranked[0].rd_now,
        before.ranked[0].shown,
    )
    assert after.ranked[0].rating.games == 99  # the rest of the row is read now
    assert [row.rank for row in after.ranked[:3]] == [1, 3, 4]
    other = LadderFactory()
    with pytest.raises(ValueError, match=f"order must rank ladder {other.pk}, got ladder {ladder.pk}"):
        in_order(order, ladder=other)
