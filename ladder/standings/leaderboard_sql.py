"""The leaderboard ranked in PostgreSQL: one statement per page, or a whole ladder's order.

``ranking_sql`` ranks a ladder with ``ladder.standings.ranking``'s SQL twins and ``rd_at_sql``'s
RDs, so ranks, order and RDs are those of the Python path (``ladder_standings``),
bit for bit. ``standings_sql`` reads one page (or one player) of it; ``ladder_order``
packs a whole ladder's order for the cache. ``ladder.standings.store`` chooses them on
PostgreSQL: on other databases, and under ``core.db.orm_twins()``, the leaderboard ranks in
Python instead.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from accounts.models import User
from core.replica import read_connection
from ladder.models import Ladder
from ladder.standings.ranking import listed_sql, rank_order_sql, ranked_sql, sort_value_sql
from ratings.models import PlayerRating
from ratings.nightly import rd_at_sql

_RATING_FIELDS = [field.attname for field in PlayerRating._meta.concrete_fields]
_USER_FIELDS = [field.attname for field in User._meta.concrete_fields]
Found = list[tuple[PlayerRating, int | None, float]]  # a rating with its player, its rank (or None), its RD now


@dataclass(frozen=True, slots=True)
class Counts:
    members: int
    ranked: int
    shown: int  # the rows the leaderboard lists: its search and bot filter applied


def ranking_sql(ladder: Ladder, now: datetime) -> tuple[str, dict[str, Any]]:
    """The ``WITH`` clause that ranks ``ladder`` at ``now``: ``s``, its members, and ``n``, them numbered.

    ``s`` has each member's rating row id, player id, rating, RD now (``rd``), whether
    ranked and sort value; ``n`` adds ``rank`` (``NULL`` for the unranked). RDs come from
    ``rd_at_sql`` and the rule and order from ``ladder.standings.ranking``, so ranks, order and RDs
    are the Python path's, bit for bit. The members are read once (``MATERIALIZED``;
    ``OFFSET 0`` keeps the RD from being recomputed in every expression that uses it) and
    only the ranked ones are sorted to number them. ``visible_order`` lists ``n``'s rows
    as the leaderboard does.
    """
    table = PlayerRating._meta.db_table
    rd, params = rd_at_sql(ladder, now, "r")
    ranked, ranked_params = ranked_sql(ladder, now, "m.rd", "r")
    order, order_params = sort_value_sql(ladder.leaderboard_scale, "m.rd", "r")
    listed, listed_params = listed_sql(now, "r")
    sql = f"""
        WITH s AS MATERIALIZED (
            SELECT r.id, r.player_id, r.rating, m.rd, {ranked} AS is_ranked, {order} AS score
            FROM {table} AS r CROSS JOIN LATERAL (SELECT {rd} AS rd OFFSET 0) AS m
            WHERE r.ladder_id = %(ladder)s AND {listed}
        ),
        n AS (
            SELECT s.*, row_number() OVER (ORDER BY {rank_order_sql("s.score", "s")}) AS rank
            FROM s WHERE s.is_ranked
            UNION ALL
            SELECT s.*, NULL FROM s WHERE s.is_ranked IS NOT TRUE  -- NULL (no game yet) is not ranked
        )
    """
    return sql, {**params, **ranked_params, **order_params, **listed_params, "ladder": ladder.pk}


def visible_order(alias: str) -> str:
    """The leaderboard's order of ``ranking_sql``'s rows: ranked ones by rank, then the others by rating."""
    return f"{alias}.rank IS NULL, {alias}.rank, {alias}.rating DESC, {alias}.id"


def standings_sql(
    *,
    ladder: Ladder,
    now: datetime,
    query: str = "",
    bots: str = "",
    offset: int = 0,
    limit: int | None = None,
    player_id: int | None = None,
) -> tuple[Counts, Found]:
    """Rank ``ladder`` at ``now`` in PostgreSQL; the counts, and some rows with their rank and RD now.

    The rows are the visible ones (ranked by rank, then, when the ladder shows them, the
    unranked ones by rating, as ``ladder_standings`` lists them) that pass the search and the
    bot filter, ``limit`` of them from ``offset``; or only ``player_id``'s, shown or not.
    One statement (see ``ranking_sql``): only the asked rows leave the server.
    """
    table = PlayerRating._meta.db_table
    users = User._meta.db_table
    ranking, params = ranking_sql(ladder, now)
    params = {**params, "offset": offset, "limit": limit}
    shown = ["true"]
    if player_id is not None:
        shown.append("n.player_id = %(player)s")
        params["player"] = player_id
    elif not ladder.show_provisional:
        shown.append("n.rank IS NOT NULL")
    if query:
        shown.append("strpos(lower(u.username), lower(%(query)s)) > 0")
        params["query"] = query
    if bots:
        shown.append("u.is_bot = %(is_bot)s")
        params["is_bot"] = bots == "only"
    join = f"JOIN {users} AS u ON u.id = n.player_id" if query or bots else ""
    columns = ", ".join([f"pr.{name}" for name in _RATING_FIELDS] + [f"pu.{name}" for name in _USER_FIELDS])
    sql = f"""
        {ranking},
        v AS MATERIALIZED (
            SELECT n.id, n.rank, n.rd, n.rating FROM n {join}
            WHERE {" AND ".join(shown)}
        )
        SELECT c.members, c.ranked, c.shown, p.rank, p.rd, {columns}
        FROM (
            SELECT (SELECT count(*) FROM s) AS members, (SELECT count(*) FROM s WHERE s.is_ranked) AS ranked,
                (SELECT count(*) FROM v) AS shown
        ) AS c
        LEFT JOIN LATERAL (
            SELECT v.* FROM v ORDER BY {visible_order("v")} LIMIT %(limit)s OFFSET %(offset)s
        ) AS p ON true
        LEFT JOIN {table} AS pr ON pr.id = p.id
        LEFT JOIN {users} AS pu ON pu.id = pr.player_id
        ORDER BY {visible_order("p")}
    """
    reading = read_connection()  # the replica on the pages it serves (core.replica)
    with reading.cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    members, ranked_count, shown_count = fetched[0][:3]
    rows = []
    for record in fetched:
        if record[5] is None:  # the counts alone: no row on this page
            continue
        rating = PlayerRating.from_db(reading.alias, _RATING_FIELDS, record[5 : 5 + len(_RATING_FIELDS)])
        rating.player = User.from_db(reading.alias, _USER_FIELDS, record[5 + len(_RATING_FIELDS) :])
        rows.append((rating, record[3], record[4]))
    return Counts(members=members, ranked=ranked_count, shown=shown_count), rows


class SqlStandings:
    """The visible leaderboard rows as ``Paginator`` reads them, ranked in PostgreSQL.

    ``count()`` and each slice come from one statement (see ``standings_sql``) that
    ranks the whole ladder and returns only the asked rows; the first slice asked for is
    fetched with the counts, so a page in range costs one ranking query.
    """

    def __init__(self, *, ladder: Ladder, now: datetime, query: str, bots: str, first: slice) -> None:
        self._ladder, self._now, self._query, self._bots = ladder, now, query, bots
        self.counts, self._fetched = standings_sql(
            ladder=ladder, now=now, query=query, bots=bots, offset=first.start, limit=first.stop - first.start
        )
        self._fetched_at = first.start

    def count(self) -> int:
        return self.counts.shown

    def __len__(self) -> int:
        return self.counts.shown

    def __getitem__(self, index: slice) -> Found:
        start, stop = index.start or 0, index.stop
        if start != self._fetched_at:
            _, self._fetched = standings_sql(
                ladder=self._ladder,
                now=self._now,
                query=self._query,
                bots=self._bots,
                offset=start,
                limit=stop - start,
            )
            self._fetched_at = start
        return self._fetched[: stop - start]


ORDER_ROW = struct.Struct(">qdd")  # a rating row id, its RD at the ranking instant, its rating (big-endian)


@dataclass(frozen=True, slots=True)
class LeaderboardOrder:
    """A whole ladder's plain leaderboard as ranked at ``at``, compact enough to cache and page through.

    ``rows`` packs the visible rows in leaderboard order (ranked ones by rank, then, when
    the ladder shows them, the unranked ones by rating) as ``ORDER_ROW``s, 24 bytes each
    (2.4 MB for 100,000 members): the first ``ranked`` of them hold ranks 1 to ``ranked``.
    """

    ladder_id: int
    at: datetime
    members: int
    ranked: int
    shown: int
    rows: bytes
    ladder_state: str = ""  # ``ladder_state(ladder)`` when ranked: a change of settings ranks it again


def ladder_state(ladder: Ladder) -> str:
    """A digest of ``ladder``'s settings: a cached ranking or page made with other settings is not served.

    Every field counts (a ladder has no field that changes with play), so a moderator's
    change of scale, ranking rules or engine shows at once rather than after the cache period.
    """
    values = [(field.attname, getattr(ladder, field.attname)) for field in ladder._meta.concrete_fields]
    return hashlib.sha256(repr(values).encode()).hexdigest()[:16]


def ladder_order(*, ladder: Ladder, now: datetime) -> LeaderboardOrder:
    """``ladder`` ranked at ``now``, PostgreSQL only (``ladder.standings.store``): one statement.

    The ranking is ``ranking_sql``'s and the order ``visible_order``'s, those of
    ``standings_sql``; the server packs the rows itself (``int8send`` and ``float8send``
    are big-endian, as ``ORDER_ROW`` reads them), so no row is ever a Python object.
    """
    ranking, params = ranking_sql(ladder, now)
    shown = "true" if ladder.show_provisional else "n.rank IS NOT NULL"
    sql = f"""
        {ranking}
        SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM s WHERE s.is_ranked), count(*),
            string_agg(
                int8send(n.id) || float8send(n.rd) || float8send(n.rating), ''::bytea ORDER BY {visible_order("n")}
            )
        FROM n WHERE {shown}
    """
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        members, ranked, shown_count, packed = cursor.fetchone()
    rows = bytes(packed or b"")
    if len(rows) != shown_count * ORDER_ROW.size:  # a NULL field would drop its row from string_agg
        raise RuntimeError(f"packed {len(rows)} bytes for {shown_count} rows of {ORDER_ROW.size}")
    return LeaderboardOrder(
        ladder_id=ladder.pk,
        at=now,
        members=members,
        ranked=ranked,
        shown=shown_count,
        rows=rows,
        ladder_state=ladder_state(ladder),
    )


class OrderedStandings:
    """A ``LeaderboardOrder``'s rows as ``Paginator`` reads them: a slice reads its ratings by id, one query."""

    def __init__(self, order: LeaderboardOrder) -> None:
        self._order = order

    def count(self) -> int:
        return self._order.shown

    def __len__(self) -> int:
        return self._order.shown

    def __getitem__(self, index: slice) -> Found:
        order = self._order
        start, stop = index.start or 0, min(index.stop, order.shown)
        packed = list(ORDER_ROW.iter_unpack(order.rows[start * ORDER_ROW.size : stop * ORDER_ROW.size]))
        ratings = PlayerRating.objects.select_related("player").in_bulk([pk for pk, _, _ in packed])
        found = []
        for position, (pk, rd_now, value) in enumerate(packed, start=start):
            rating = ratings.get(pk)
            if rating is None:  # deleted since the ranking
                continue
            rating.rating = value  # the rating that was ranked, so the values shown agree with the rank
            found.append((rating, position + 1 if position < order.ranked else None, rd_now))
        return found
