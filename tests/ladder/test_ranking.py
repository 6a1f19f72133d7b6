"""The ranking rule (``ladder.standings.ranking``): its Python and SQL sides agree on every scale, ties included.

PostgreSQL ranks with the SQL twins and every other database (or PostgreSQL under
``core.db.orm_twins()``) in Python. Here both rank ladders full of ties: equal sort values
with different ratings, equal sort values and ratings (the row id decides), players
exactly at the provisional threshold, and RDs grown since their last write.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from core import db
from ladder.models import Ladder, LeaderboardScale, LeaderboardSnapshot
from ladder.standings.leaderboard import ladder_leaderboard, ladder_leaderboard_cached, ladder_leaderboard_in_order
from ladder.standings.leaderboard_sql import ladder_order
from ladder.standings.nightly import leaderboard_snapshot
from ladder.standings.ranking import rank_key, rank_order_sql, ranked_sql, scale_value, sort_value, sort_value_sql
from ratings.engines import display
from ratings.models import PlayerRating
from ratings.nightly import rd_at_sql
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
SCALES = [LeaderboardScale.GXE, LeaderboardScale.TR, LeaderboardScale.CONSERVATIVE]

# (rating, RD, days since the RD was written): tied on every scale, or on some.
TIES = [
    (1500.0, 60.0, 0),  # x = 0 whatever the RD: GLIXARE and TR tie these three, the rating too
    (1500.0, 90.0, 0),
    (1500.0, 40.0, 0),
    (1600.0, 50.0, 0),  # r − 2·RD = 1500: conservative ties these two; the rating decides
    (1700.0, 100.0, 0),  # exactly at the provisional threshold: ranked
    (1650.0, 70.0, 0),  # the same player three times over: only the row id decides
    (1650.0, 70.0, 0),
    (1650.0, 70.0, 0),
    (200.0, 100.0, 0),  # conservative 0.0
    (1420.0, 60.0, 3),  # RDs grown since written
    (1420.0, 60.0, 3),
    (1880.0, 95.0, 3),  # grows past 100: not ranked
    (1390.5, 30.0, 0),
]


def tied_ladder(scale: str, engine: str = "tgr") -> Ladder:
    ladder = LadderFactory(leaderboard_scale=scale, engine=engine, ranked_min_games=0, ranked_max_idle_days=0)
    users = bulk_users(f"tie-{scale}-{engine}-", len(TIES) * 2)
    rows = [
        PlayerRating(
            ladder=ladder,
            player=user,
            rating=rating,
            rd=rd,
            volatility=0.06,
            rd_as_of=NOW - timedelta(days=days),
            games=10,
            last_played_at=NOW - timedelta(days=days),
            joined_at=NOW - timedelta(days=100),
        )
        for user, (rating, rd, days) in zip(users, TIES * 2, strict=True)
    ]
    PlayerRating.objects.bulk_create(rows)
    return ladder


def python_order(ladder: Ladder) -> list[int]:
    engine = ladder.get_engine()
    ranked = []
    for row in PlayerRating.objects.filter(ladder=ladder):
        rd = engine.rd_at(row.state(), NOW.timestamp())
        if rd <= ladder.provisional_rd:
            ranked.append((rank_key(ladder.leaderboard_scale, row.rating, rd, row.pk), row.pk))
    return [pk for _, pk in sorted(ranked)]


def sql_order(ladder: Ladder) -> list[tuple[int, float]]:
    rd, params = rd_at_sql(ladder, NOW, "r")
    ranked, ranked_params = ranked_sql(ladder, NOW, "m.rd", "r")
    value, value_params = sort_value_sql(ladder.leaderboard_scale, "m.rd", "r")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT r.id, {value} FROM {PlayerRating._meta.db_table} AS r "
            f"CROSS JOIN LATERAL (SELECT {rd} AS rd) AS m "
            f"WHERE r.ladder_id = %(ladder)s AND {ranked} ORDER BY {rank_order_sql(value, 'r')}",
            {**params, **ranked_params, **value_params, "ladder": ladder.pk},
        )
        return cursor.fetchall()


@pytest.mark.parametrize("scale", SCALES)
def test_python_and_sql_rank_in_the_same_order_with_the_same_values(scale):
    ladder = tied_ladder(scale)
    engine = ladder.get_engine()
    ratings = {row.pk: row for row in PlayerRating.objects.filter(ladder=ladder)}

    in_sql = sql_order(ladder)

    assert [pk for pk, _ in in_sql] == python_order(ladder)
    assert len(in_sql) == 2 * (len(TIES) - 1)
    for pk, value in in_sql:  # the same float, not merely a close one
        row = ratings[pk]
        assert value == sort_value(scale, row.rating, engine.rd_at(row.state(), NOW.timestamp()))
    values = [value for _, value in in_sql]
    assert len(set(values)) < len(values) - len(TIES), "the ladder must hold ties on this scale"


@pytest.mark.parametrize("scale", SCALES)
def test_the_leaderboard_ranks_ties_alike_in_sql_and_in_python(scale):
    ladder = tied_ladder(scale)

    in_sql = ladder_leaderboard(ladder=ladder, now=NOW, per_page=100)
    order = ladder_order(ladder=ladder, now=NOW)
    cut = ladder_leaderboard_in_order(ladder=ladder, order=order, per_page=100)
    with db.orm_twins():
        in_python = ladder_leaderboard(ladder=ladder, now=NOW, per_page=100)

    def ranks(board):
        return [(row.rank, row.rating.pk, row.rd_now, row.score) for row in (*board.ranked, *board.provisional)]

    assert ranks(in_sql) == ranks(in_python) == ranks(cut)
    assert [pk for _, pk, _, _ in ranks(in_sql)][: in_sql.ranked_count] == python_order(ladder)


@pytest.mark.parametrize("scale", SCALES)
def test_the_snapshot_ranks_ties_alike_in_sql_and_in_python(scale):
    ladder = tied_ladder(scale)

    def snapshot() -> tuple:
        taken = leaderboard_snapshot(ladder=ladder, midnight=NOW, now=NOW)
        counts = (taken.member_count, taken.ranked_count, taken.provisional_count)
        entries = list(taken.entries.order_by("rank").values_list("rank", "player_id", "rating", "rd", "value"))
        LeaderboardSnapshot.objects.filter(pk=taken.pk).delete()
        return counts, entries

    in_sql = snapshot()
    with db.orm_twins():
        in_python = snapshot()

    assert in_sql == in_python
    assert in_sql[0] == (2 * len(TIES), 2 * (len(TIES) - 1), 2)
    assert [player for _, player, _, _, _ in in_sql[1]] == [
        PlayerRating.objects.get(pk=pk).player_id for pk in python_order(ladder)
    ]
    for _, _, rating, rd, value in in_sql[1]:
        assert value == scale_value(scale, display(rating, rd))


def test_sort_values_follow_the_display_scale():
    for rating, rd, _ in TIES:
        shown = display(rating, rd)
        assert sort_value(LeaderboardScale.CONSERVATIVE, rating, rd) == shown.conservative
        for scale in (LeaderboardScale.GXE, LeaderboardScale.TR):  # the unrounded curve: same order
            higher = sort_value(scale, rating + 1.0, rd) > sort_value(scale, rating, rd)
            assert higher and display(rating + 1.0, rd).tr > shown.tr
        assert scale_value(LeaderboardScale.GXE, shown) == shown.gxe
        assert scale_value(LeaderboardScale.TR, shown) == shown.tr
        assert scale_value(LeaderboardScale.CONSERVATIVE, shown) == shown.conservative


@pytest.mark.parametrize("scale", SCALES)
def test_the_cached_leaderboard_pages_are_alike_in_sql_and_in_python(scale):
    """On PostgreSQL a cached page is cut from the cached order; its twin caches each page ranked in Python."""
    from django.core.cache import cache

    ladder = tied_ladder(scale)

    def pages() -> list[tuple]:
        cache.clear()
        boards = [ladder_leaderboard_cached(ladder=ladder, now=NOW, seconds=5, page=n)[1] for n in (1, 2)]
        return [
            (
                (board.member_count, board.ranked_count, board.page.number, board.page.paginator.count),
                [(row.rank, row.rating.pk, row.rd_now, row.score, row.reasons) for row in board.page],
            )
            for board in boards
        ]

    in_sql = pages()
    with db.orm_twins():
        in_python = pages()

    assert in_sql == in_python
    assert in_sql[0][0][1] == 2 * (len(TIES) - 1)
