"""The leaderboard: who is ranked, in which order, one page at a time.

Ranked in PostgreSQL (``_standings_sql``; ``ladder_order`` for a whole ladder's ranking)
and in Python on other databases; both follow ``ladder.ranking``. Ranking a big ladder
costs PostgreSQL about 0.1–0.25 s per 100,000 members, so the API and the ladder page
serve it from the cache: ``ladder_order_cached`` ranks each ladder once per cache period
for both, and ``cached_entry`` lets one request at a time recompute an expired entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import pickle
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.db import connection

from accounts.models import User
from ladder.models import (
    Ladder,
    LeaderboardScale,
    LeaderboardSnapshot,
)
from ladder.ranking import rank_key, ranked_sql, sort_value_sql
from ladder.snapshots import RankChange, rank_changes
from ratings.engines import Display, display
from ratings.models import PlayerRating
from ratings.nightly import rd_at_sql

logger = logging.getLogger(__name__)

LEADERBOARD_PAGE_SIZE = 50


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int | None
    rating: PlayerRating
    rd_now: float
    shown: Display
    score: float  # the value of the ladder's leaderboard scale
    reasons: tuple[str, ...] = ()  # why the player is not ranked; empty when ranked
    change: RankChange | None = None  # since the latest snapshot; None when unknown or unranked

    @property
    def reason(self) -> str:
        return " · ".join(self.reasons)


@dataclass(frozen=True, slots=True)
class Leaderboard:
    ranked: list[LeaderboardRow]  # this page's ranked rows, by rank
    provisional: list[LeaderboardRow]  # this page's unranked rows (provisional, too few games or idle)
    member_count: int
    ranked_count: int = 0  # in the whole ladder, whatever the search
    unranked_count: int = 0
    page: Page | None = None
    query: str = ""
    bots: str = ""
    since: LeaderboardSnapshot | None = None  # the snapshot rank changes are measured from

    @property
    def is_filtered(self) -> bool:
        return bool(self.query or self.bots)


def _scale_value(scale: str, shown: Display) -> float:
    if scale == LeaderboardScale.TR:
        return shown.tr
    if scale == LeaderboardScale.CONSERVATIVE:
        return shown.conservative
    return shown.gxe


def unranked_reasons(*, ladder: Ladder, rating: PlayerRating, rd_now: float, now: datetime) -> tuple[str, ...]:
    """Why ``rating`` is not ranked in ``ladder`` at ``now``, in words; empty if it is.

    The three rules are ladder settings: a current RD at or below ``provisional_rd``
    (SPEC §1), at least ``ranked_min_games`` rated games, and a game within
    ``ranked_max_idle_days`` (0 turns that rule off). The RD gets a decimal only when
    whole numbers would read "RD 100 > 100".
    """
    reasons = []
    if rd_now > ladder.provisional_rd:
        shown = f"{rd_now:.0f}" if round(rd_now) > ladder.provisional_rd else f"{rd_now:.1f}"
        reasons.append(f"RD {shown} > {ladder.provisional_rd:g}")
    if rating.games < ladder.ranked_min_games:
        reasons.append(f"{rating.games} of {ladder.ranked_min_games} games")
    if ladder.ranked_max_idle_days:
        if rating.last_played_at is None:
            if rating.games >= ladder.ranked_min_games:
                reasons.append("no game yet")
        elif now - rating.last_played_at > timedelta(days=ladder.ranked_max_idle_days):
            days = (now - rating.last_played_at).days
            reasons.append(f"last game {days} day{'s' if days != 1 else ''} ago")
    return tuple(reasons)


def _standings(*, ladder: Ladder, now: datetime) -> tuple[list[LeaderboardRow], list[LeaderboardRow]]:
    """Every member of ``ladder``, ranked ones numbered by the display scale, in one query.

    Ranking needs everyone's RD *now*, so this reads all members at once (a few
    microseconds each). PostgreSQL ranks in SQL instead (``_standings_sql``) and reads
    one page; this path serves the other databases (the embedded SQLite default), the
    nightly snapshot there, and the tests that hold the two paths to the same answers.
    """
    members = PlayerRating.objects.members().filter(ladder=ladder).select_related("player").order_by("-rating", "id")
    ranked: list[LeaderboardRow] = []
    unranked: list[LeaderboardRow] = []
    for membership in members:
        membership.ladder = ladder  # one ladder, one engine: no query per row
        rd_now = membership.rd_at(now)
        shown = membership.display_at(now)
        value = _scale_value(ladder.leaderboard_scale, shown)
        reasons = unranked_reasons(ladder=ladder, rating=membership, rd_now=rd_now, now=now)
        row = LeaderboardRow(rank=None, rating=membership, rd_now=rd_now, shown=shown, score=value, reasons=reasons)
        (unranked if reasons else ranked).append(row)
    scale = ladder.leaderboard_scale
    ranked.sort(key=lambda row: rank_key(scale, row.rating.rating, row.rd_now, row.rating.pk))
    numbered = [
        LeaderboardRow(rank=index, rating=row.rating, rd_now=row.rd_now, shown=row.shown, score=row.score)
        for index, row in enumerate(ranked, start=1)
    ]
    return numbered, unranked


def ranks_in_sql() -> bool:
    """Leaderboards rank in the database on PostgreSQL, in Python elsewhere (the two agree)."""
    return connection.vendor == "postgresql"


class _SqlStandings:
    """The visible leaderboard rows as ``Paginator`` reads them, ranked in PostgreSQL.

    ``count()`` and each slice come from one statement (see ``_standings_sql``) that
    ranks the whole ladder and returns only the asked rows; the first slice asked for is
    fetched with the counts, so a page in range costs one ranking query.
    """

    def __init__(self, *, ladder: Ladder, now: datetime, query: str, bots: str, first: slice) -> None:
        self._ladder, self._now, self._query, self._bots = ladder, now, query, bots
        self.counts, self._fetched = _standings_sql(
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
            _, self._fetched = _standings_sql(
                ladder=self._ladder,
                now=self._now,
                query=self._query,
                bots=self._bots,
                offset=start,
                limit=stop - start,
            )
            self._fetched_at = start
        return self._fetched[: stop - start]


_RATING_FIELDS = [field.attname for field in PlayerRating._meta.concrete_fields]
_USER_FIELDS = [field.attname for field in User._meta.concrete_fields]
Found = list[tuple[PlayerRating, int | None, float]]  # a rating with its player, its rank (or None), its RD now


@dataclass(frozen=True, slots=True)
class _Counts:
    members: int
    ranked: int
    shown: int  # the rows the leaderboard lists: its search and bot filter applied


def _ranking_sql(ladder: Ladder, now: datetime) -> tuple[str, dict[str, Any]]:
    """The ``WITH`` clause that ranks ``ladder`` at ``now``: ``s``, its members, and ``n``, them numbered.

    ``s`` has each member's rating row id, player id, rating, RD now (``rd``), whether
    ranked and sort value; ``n`` adds ``rank`` (``NULL`` for the unranked). RDs come from
    ``rd_at_sql`` and the rule and order from ``ladder.ranking``, so ranks, order and RDs
    are the Python path's, bit for bit. The members are read once (``MATERIALIZED``;
    ``OFFSET 0`` keeps the RD from being recomputed in every expression that uses it) and
    only the ranked ones are sorted to number them. ``_VISIBLE_ORDER`` lists ``n``'s rows
    as the leaderboard does.
    """
    table = PlayerRating._meta.db_table
    rd, params = rd_at_sql(ladder, now, "r")
    ranked, ranked_params = ranked_sql(ladder, now, "m.rd", "r")
    order, order_params = sort_value_sql(ladder.leaderboard_scale, "m.rd", "r")
    sql = f"""
        WITH s AS MATERIALIZED (
            SELECT r.id, r.player_id, r.rating, m.rd, {ranked} AS is_ranked, {order} AS score
            FROM {table} AS r CROSS JOIN LATERAL (SELECT {rd} AS rd OFFSET 0) AS m
            WHERE r.ladder_id = %(ladder)s AND r.is_active
        ),
        n AS (
            SELECT s.*, row_number() OVER (ORDER BY s.score DESC, s.rating DESC, s.id) AS rank
            FROM s WHERE s.is_ranked
            UNION ALL
            SELECT s.*, NULL FROM s WHERE s.is_ranked IS NOT TRUE  -- NULL (no game yet) is not ranked
        )
    """
    return sql, {**params, **ranked_params, **order_params, "ladder": ladder.pk}


def _visible_order(alias: str) -> str:
    """The leaderboard's order of ``_ranking_sql``'s rows: ranked ones by rank, then the others by rating."""
    return f"{alias}.rank IS NULL, {alias}.rank, {alias}.rating DESC, {alias}.id"


def _standings_sql(
    *,
    ladder: Ladder,
    now: datetime,
    query: str = "",
    bots: str = "",
    offset: int = 0,
    limit: int | None = None,
    player_id: int | None = None,
) -> tuple[_Counts, Found]:
    """Rank ``ladder`` at ``now`` in PostgreSQL; the counts, and some rows with their rank and RD now.

    The rows are the visible ones (ranked by rank, then, when the ladder shows them, the
    unranked ones by rating, as ``_standings`` lists them) that pass the search and the
    bot filter, ``limit`` of them from ``offset``; or only ``player_id``'s, shown or not.
    One statement (see ``_ranking_sql``): only the asked rows leave the server.
    """
    table = PlayerRating._meta.db_table
    users = User._meta.db_table
    ranking, params = _ranking_sql(ladder, now)
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
            SELECT v.* FROM v ORDER BY {_visible_order("v")} LIMIT %(limit)s OFFSET %(offset)s
        ) AS p ON true
        LEFT JOIN {table} AS pr ON pr.id = p.id
        LEFT JOIN {users} AS pu ON pu.id = pr.player_id
        ORDER BY {_visible_order("p")}
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    members, ranked_count, shown_count = fetched[0][:3]
    rows = []
    for record in fetched:
        if record[5] is None:  # the counts alone: no row on this page
            continue
        rating = PlayerRating.from_db(connection.alias, _RATING_FIELDS, record[5 : 5 + len(_RATING_FIELDS)])
        rating.player = User.from_db(connection.alias, _USER_FIELDS, record[5 + len(_RATING_FIELDS) :])
        rows.append((rating, record[3], record[4]))
    return _Counts(members=members, ranked=ranked_count, shown=shown_count), rows


def _rows_of(*, ladder: Ladder, now: datetime, found: Found) -> list[LeaderboardRow]:
    """``LeaderboardRow``s for what ``_standings_sql`` found, in its order."""
    rows = []
    for rating, rank, rd_now in found:
        rating.ladder = ladder
        shown = display(rating.rating, rd_now, ladder.provisional_rd)
        reasons = () if rank is not None else unranked_reasons(ladder=ladder, rating=rating, rd_now=rd_now, now=now)
        value = _scale_value(ladder.leaderboard_scale, shown)
        rows.append(LeaderboardRow(rank=rank, rating=rating, rd_now=rd_now, shown=shown, score=value, reasons=reasons))
    return rows


def ladder_standings(*, ladder: Ladder, now: datetime) -> tuple[list[LeaderboardRow], list[LeaderboardRow]]:
    """Every member of ``ladder`` at ``now``: the ranked ones numbered, then the others with reasons."""
    return _standings(ladder=ladder, now=now)


BOT_FILTERS = ("hide", "only")


def ladder_leaderboard(
    *,
    ladder: Ladder,
    now: datetime,
    page: int | str | None = 1,
    per_page: int = LEADERBOARD_PAGE_SIZE,
    query: str = "",
    bots: str = "",
) -> Leaderboard:
    """One page of the leaderboard: ranked players by rank, then the unranked ones by rating.

    Ranks are those of the whole ladder, so a search for a name shows the player's real
    rank. ``bots`` is ``"hide"``, ``"only"`` or anything else for everyone. Unranked
    players are left out entirely when the ladder does not show provisional players.
    """
    query = query.strip()
    bots = bots if bots in BOT_FILTERS else ""
    if ranks_in_sql():
        return _leaderboard_sql(ladder=ladder, now=now, page=page, per_page=per_page, query=query, bots=bots)
    ranked, unranked = _standings(ladder=ladder, now=now)
    member_count = len(ranked) + len(unranked)
    ranked_count, unranked_count = len(ranked), len(unranked)
    rows = ranked + (unranked if ladder.show_provisional else [])
    if query:
        needle = query.casefold()
        rows = [row for row in rows if needle in row.rating.player.username.casefold()]
    if bots:
        rows = [row for row in rows if row.rating.player.is_bot == (bots == "only")]
    this_page = Paginator(rows, per_page).get_page(page)
    return _with_changes(
        ladder=ladder,
        page=this_page,
        member_count=member_count,
        ranked_count=ranked_count,
        unranked_count=unranked_count,
        query=query,
        bots=bots,
    )


def _leaderboard_sql(
    *, ladder: Ladder, now: datetime, page: int | str | None, per_page: int, query: str, bots: str
) -> Leaderboard:
    """``ladder_leaderboard`` on PostgreSQL: ranked there, only the page's rows read (see ``_standings_sql``)."""
    try:
        # No page is numbered past 2³¹ (its rows' offset would not fit PostgreSQL's bigint): such a
        # number is simply past the last page, which ``get_page`` then serves.
        number = min(max(int(page), 1), 2**31)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = 1
    first = slice((number - 1) * per_page, number * per_page)
    source = _SqlStandings(ladder=ladder, now=now, query=query, bots=bots, first=first)
    this_page = Paginator(source, per_page).get_page(page)
    this_page.object_list = _rows_of(ladder=ladder, now=now, found=list(this_page.object_list))
    counts = source.counts
    return _with_changes(
        ladder=ladder,
        page=this_page,
        member_count=counts.members,
        ranked_count=counts.ranked,
        unranked_count=counts.members - counts.ranked,
        query=query,
        bots=bots,
    )


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
    """``ladder`` ranked at ``now``, PostgreSQL only (see ``ranks_in_sql``): one statement.

    The ranking is ``_ranking_sql``'s and the order ``_visible_order``'s, those of
    ``_standings_sql``; the server packs the rows itself (``int8send`` and ``float8send``
    are big-endian, as ``ORDER_ROW`` reads them), so no row is ever a Python object.
    """
    ranking, params = _ranking_sql(ladder, now)
    shown = "true" if ladder.show_provisional else "n.rank IS NOT NULL"
    sql = f"""
        {ranking}
        SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM s WHERE s.is_ranked), count(*),
            string_agg(
                int8send(n.id) || float8send(n.rd) || float8send(n.rating), ''::bytea ORDER BY {_visible_order("n")}
            )
        FROM n WHERE {shown}
    """
    with connection.cursor() as cursor:
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


class _OrderedStandings:
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


def ladder_leaderboard_in_order(
    *, ladder: Ladder, order: LeaderboardOrder, page: int | str | None = 1, per_page: int = LEADERBOARD_PAGE_SIZE
) -> Leaderboard:
    """One page of ``ladder``'s leaderboard (no search, no bot filter) as ``order`` ranked it.

    Counts, order, ranks, ratings and RDs are those of ``order.at``, and so are the
    unranked reasons and display values; the rest of each row (games, last game, player)
    is read now, in one query for the page's rows. At ``order.at`` the pages are
    ``ladder_leaderboard``'s.
    """
    if order.ladder_id != ladder.pk:
        raise ValueError(f"order must rank ladder {ladder.pk}, got ladder {order.ladder_id}")
    this_page = Paginator(_OrderedStandings(order), per_page).get_page(page)
    this_page.object_list = _rows_of(ladder=ladder, now=order.at, found=list(this_page.object_list))
    return _with_changes(
        ladder=ladder,
        page=this_page,
        member_count=order.members,
        ranked_count=order.ranked,
        unranked_count=order.members - order.ranked,
        query="",
        bots="",
    )


def _with_changes(
    *,
    ladder: Ladder,
    page: Page,
    member_count: int,
    ranked_count: int,
    unranked_count: int,
    query: str,
    bots: str,
) -> Leaderboard:
    """The ``Leaderboard`` of ``page``'s rows, ranked ones with their change since the latest snapshot."""
    ranked_here = [row for row in page if row.rank is not None]
    since, changes = rank_changes(ladder=ladder, ranks={row.rating.player_id: row.rank for row in ranked_here})
    return Leaderboard(
        ranked=[dataclasses.replace(row, change=changes.get(row.rating.player_id)) for row in ranked_here],
        provisional=[row for row in page if row.rank is None],
        member_count=member_count,
        ranked_count=ranked_count,
        unranked_count=unranked_count,
        page=page,
        query=query,
        bots=bots,
        since=since,
    )


# Caching -------------------------------------------------------------------------------

STALE_SECONDS = 60  # how long past its freshness a value may still be served while one request recomputes it
LOCK_SECONDS = 30  # a recomputation that takes longer (or whose process died) lets another one start
COLD_WAIT_SECONDS = 5.0  # on a cold key, how long the others wait for the one computing it


def cached(key: str, seconds: int, compute: Callable[[], Any]) -> Any:
    """``compute()``, kept ``seconds`` in the cache, recomputed by one request at a time (see ``cached_entry``)."""

    def entry() -> tuple[float, Any]:
        value = compute()
        return time.time() + seconds, value

    return cached_entry(key, entry)[1]


def cached_entry(key: str, compute: Callable[[], tuple[float, Any]], *, source: str | None = None) -> tuple[float, Any]:
    """``compute()``'s ``(expires, value)``, kept in the cache, recomputed by one request at a time.

    The cache holds the entry until ``STALE_SECONDS`` past ``expires``. Once a value is
    past ``expires``, the first request to take the lock (``cache.add``: atomic in Redis
    and in the local-memory cache) recomputes it while every other request gets the stale
    value at once: an expiry costs one computation, not one per waiting request. On a
    cold key nothing can be served, so the others wait for the first to finish (up to
    ``COLD_WAIT_SECONDS``, then compute it themselves). A computation that raises (a 404,
    a refused search) stores nothing and frees the lock, and the next waiter takes it. A
    value computed from another cached one (its ``source``) is served stale, not
    recomputed, while the source is being recomputed: it would only be recomputed from
    the stale source. With ``CACHE_URL`` set the cache and the lock are shared by every
    process.
    """
    entry = _read(key)
    now = time.time()
    if entry is not None and entry[0] > now:
        return entry
    if entry is not None and source is not None and cache.get(f"{source}:lock") is not None:
        return entry
    lock = f"{key}:lock"
    locked = cache.add(lock, 1, timeout=LOCK_SECONDS)
    if not locked:
        if entry is not None:
            return entry
        deadline = now + COLD_WAIT_SECONDS
        while time.time() < deadline:
            time.sleep(0.02)
            entry = _read(key)
            if entry is not None:
                return entry
            locked = cache.add(lock, 1, timeout=LOCK_SECONDS)  # free again: the one computing it gave up
            if locked:
                break
    try:
        entry = compute()
        cache.set(key, entry, timeout=int(max(entry[0] - time.time(), 0)) + STALE_SECONDS)
    finally:
        if locked:
            cache.delete(lock)
    return entry


def _read(key: str) -> Any:
    """The cached entry, or ``None`` if there is none or it can no longer be read (written by
    code since changed: a miss, recomputed, rather than an error)."""
    try:
        return cache.get(key)
    except (pickle.UnpicklingError, AttributeError, ImportError, EOFError, TypeError, ValueError):
        logger.warning("unreadable cache entry %s: recomputing it", key, exc_info=True)
        return None


def _format(*classes: type) -> str:
    """A digest of ``classes``' fields: the keys of pickled entries name it, so a deploy that
    changes them reads none of the entries the previous code wrote."""
    fields = []
    for cls in classes:
        if dataclasses.is_dataclass(cls):
            fields.append([(f.name, str(f.type)) for f in dataclasses.fields(cls)])
        else:  # a model
            fields.append([f.attname for f in cls._meta.concrete_fields])
    return hashlib.sha256(repr(fields).encode()).hexdigest()[:12]


_ORDER_FORMAT = _format(LeaderboardOrder)


def order_key(slug: str) -> str:
    """The cache key of the ladder ``slug``'s ranking (a ``LeaderboardOrder``), shared by the API and the pages."""
    return f"api:leaderboard:order:{_ORDER_FORMAT}:{slug}"


def ladder_order_cached(*, ladder: Ladder, now: datetime, seconds: int) -> tuple[float, LeaderboardOrder]:
    """``ladder`` ranked at most ``seconds`` before (``ladder_order``), and when that ranking expires.

    One entry per ladder for the API and the ladder page alike, so a ladder is ranked once
    per cache period for every page of both. A ranking of another ladder (the slug was
    renamed and taken over) or made with other settings is ranked again at once.
    """

    def rank() -> tuple[float, LeaderboardOrder]:
        return time.time() + seconds, ladder_order(ladder=ladder, now=now)

    key = order_key(ladder.slug)
    expires, order = cached_entry(key, rank)
    if order.ladder_id != ladder.pk or order.ladder_state != ladder_state(ladder):
        cache.delete(key)
        expires, order = cached_entry(key, rank)
    return expires, order


def _slim(row: LeaderboardRow) -> LeaderboardRow:
    """``row`` with only the public fields of its player (no password hash or e-mail address goes to the cache)."""
    player = row.rating.player
    row.rating.player = User.from_db(
        player._state.db, ["id", "username", "is_bot"], [player.pk, player.username, player.is_bot]
    )
    return row


def _keepable(board: Leaderboard) -> Leaderboard:
    """``board`` as the cache keeps it: this page's rows alone, players reduced to what a page shows.

    The page's paginator counts a ``range`` (pickled as three numbers) instead of holding
    the ranking or the search it was cut from.
    """
    page = board.page
    rows = [_slim(row) for row in (*board.ranked, *board.provisional)]
    paginator = Paginator(range(page.paginator.count), page.paginator.per_page)
    return dataclasses.replace(board, page=Page(rows, page.number, paginator))


_PAGE_FORMAT = _format(Leaderboard, LeaderboardRow, RankChange, PlayerRating, User, LeaderboardSnapshot)


MAX_PAGE_NUMBER = 10**9  # past any ladder's last page (so the last is shown), and its offset fits a bigint


def _page_number(page: int | str | None) -> int:
    """The page asked for, as the paginator reads it (anything else is the first page; past the last, the last)."""
    try:
        return min(max(int(page), 1), MAX_PAGE_NUMBER)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1


def ladder_leaderboard_cached(
    *,
    ladder: Ladder,
    now: datetime,
    seconds: int,
    page: int | str | None = 1,
    query: str = "",
    bots: str = "",
    before_search: Callable[[], None] | None = None,
) -> tuple[float, Leaderboard]:
    """``ladder_leaderboard``'s page, kept ``seconds`` in the cache (the API's leaderboard period), and when
    it expires (``time.time()``), for a caller that keeps what it makes of it as long.

    A plain page is cut from the ladder's cached ranking (``ladder_order_cached``, the one
    the API's pages come from) and kept until that ranking expires: the ladder is ranked
    once per period for every page and client, and a page served again is one cache read.
    A search or a bot filter ranks the ladder for itself, so ``before_search`` is called
    first, only when it is not in the cache, and may raise to refuse it (the ladder page
    counts it against the API's search limit). With ``seconds`` 0 nothing is cached.
    """
    query = query.strip()
    bots = bots if bots in BOT_FILTERS else ""
    number = _page_number(page)

    def ranked_for_itself() -> tuple[float, Leaderboard]:
        if (query or bots) and before_search is not None:
            before_search()
        board = ladder_leaderboard(ladder=ladder, now=now, page=number, query=query, bots=bots)
        return time.time() + seconds, _keepable(board) if seconds else board

    if not seconds:
        return ranked_for_itself()
    where = f"{_PAGE_FORMAT}:{ladder.pk}:{ladder_state(ladder)}:{number}"
    if query or bots:
        searched = hashlib.sha256(f"{query}|{bots}".encode()).hexdigest()
        return cached_entry(f"ladder:leaderboard:search:{where}:{searched}", ranked_for_itself)
    if not ranks_in_sql():
        return cached_entry(f"ladder:leaderboard:page:{where}", ranked_for_itself)

    def cut() -> tuple[float, Leaderboard]:
        expires, order = ladder_order_cached(ladder=ladder, now=now, seconds=seconds)
        return expires, _keepable(ladder_leaderboard_in_order(ladder=ladder, order=order, page=number))

    return cached_entry(f"ladder:leaderboard:page:{where}", cut, source=order_key(ladder.slug))
