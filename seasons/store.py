"""The seasons app's seam to the database: each statement in its PostgreSQL and its ORM form.

Each function here is one statement and chooses, in one place, between its hand-written
SQL (PostgreSQL) and its ORM twin (other databases: ``make run``'s SQLite), through
``core.db.on_postgresql()``; callers never ask which database they are on. The tests run
both sides (``core.db.orm_twins()`` makes PostgreSQL take the twins).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.db import connection

from core import db
from ladder.models import Ladder
from ladder.standings.ranking import listed_sql, rank_order_sql, ranked_sql, sort_value_sql
from ratings.models import PlayerRating
from ratings.nightly import rd_at_sql
from seasons.models import SeasonStanding

if TYPE_CHECKING:
    from seasons.standings import StandingRow


def ranked_at(ladder: Ladder, at: datetime) -> list[tuple[int, float, float]]:
    """Every player ranked at ``at``, best first: ``(player, rating, RD at at)``."""
    if not db.on_postgresql():
        from ladder.standings.leaderboard import ladder_standings

        rows, _ = ladder_standings(ladder=ladder, now=at)
        return [(row.rating.player_id, row.rating.rating, row.rd_now) for row in rows]
    rd, params = rd_at_sql(ladder, at, "r")
    ranked, ranked_params = ranked_sql(ladder, at, "m.rd", "r")
    order, order_params = sort_value_sql(ladder.leaderboard_scale, "m.rd", "r")
    listed, listed_params = listed_sql(at, "r")
    sql = (
        f"SELECT r.player_id, r.rating, m.rd FROM {PlayerRating._meta.db_table} AS r "
        f"CROSS JOIN LATERAL (SELECT {rd} AS rd) AS m "
        f"WHERE r.ladder_id = %(ladder)s AND {listed} AND {ranked} ORDER BY {rank_order_sql(order, 'r')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {**params, **ranked_params, **order_params, **listed_params, "ladder": ladder.pk})
        return cursor.fetchall()


def standings_archive(rows: list[StandingRow]) -> None:
    """Archive the rows (``StandingRow``s): one ``COPY`` on PostgreSQL, ``bulk_create`` elsewhere."""
    if not rows:
        return
    if db.on_postgresql():
        table = SeasonStanding._meta.db_table
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY {table} ({', '.join(rows[0]._fields)}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
        return
    SeasonStanding.objects.bulk_create([SeasonStanding(**row._asdict()) for row in rows], batch_size=2_000)
