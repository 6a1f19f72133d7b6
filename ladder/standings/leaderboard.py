"""The leaderboard: who is ranked, in which order, one page at a time.

Ranked in PostgreSQL (``leaderboard_sql``: ``standings_sql`` for a page, ``ladder_order``
for a whole ladder's ranking) and in Python on other databases (``ladder_standings``); both
follow ``ladder.standings.ranking``, and ``ladder.standings.store`` picks one. Ranking a big ladder
costs PostgreSQL about 0.1–0.25 s per 100,000 members, so the API and the ladder page
serve it from the cache: ``ladder_order_cached`` ranks each ladder once per cache period
for both, and ``cached_entry`` lets one request at a time recompute an expired entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.core.paginator import Page, Paginator

from accounts.models import User
from ladder.models import Ladder, LeaderboardSnapshot
from ladder.standings import store
from ladder.standings.leaderboard_sql import (
    Found,
    LeaderboardOrder,
    OrderedStandings,
    SqlStandings,
    ladder_order,
    ladder_state,
    standings_sql,
)
from ladder.standings.ranking import listed_q, rank_key, scale_value, unranked_reasons
from ladder.standings.snapshots import Mover, Movers, RankChange, movers_until, rank_changes
from ratings.engines import Display, display
from ratings.models import PlayerRating

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
    page: Page[LeaderboardRow]
    ranked_count: int = 0  # in the whole ladder, whatever the search
    unranked_count: int = 0
    query: str = ""
    bots: str = ""
    since: LeaderboardSnapshot | None = None  # the snapshot rank changes are measured from

    @property
    def is_filtered(self) -> bool:
        return bool(self.query or self.bots)


def ladder_standings(*, ladder: Ladder, now: datetime) -> tuple[list[LeaderboardRow], list[LeaderboardRow]]:
    """Every member of ``ladder`` at ``now``, in one query: the ranked ones numbered, then the others with reasons.

    Ranking needs everyone's RD *now*, so this reads all members at once (a few
    microseconds each). PostgreSQL ranks in SQL instead (``standings_sql``) and reads
    one page; this path serves the other databases (the embedded SQLite default), the
    nightly snapshot there, and the tests that hold the two paths to the same answers.
    """
    listed = PlayerRating.objects.filter(listed_q(now), ladder=ladder)
    members = listed.select_related("player").order_by("-rating", "id")
    ranked: list[LeaderboardRow] = []
    unranked: list[LeaderboardRow] = []
    for membership in members:
        membership.ladder = ladder  # one ladder, one engine: no query per row
        rd_now = membership.rd_at(now)
        shown = membership.display_at(now)
        value = scale_value(ladder.leaderboard_scale, shown)
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


def rows_of(*, ladder: Ladder, now: datetime, found: Found) -> list[LeaderboardRow]:
    """``LeaderboardRow``s for what ``standings_sql`` (or a ``LeaderboardOrder``) found, in its order."""
    rows = []
    for rating, rank, rd_now in found:
        rating.ladder = ladder
        shown = display(rating.rating, rd_now, ladder.provisional_rd)
        reasons = () if rank is not None else unranked_reasons(ladder=ladder, rating=rating, rd_now=rd_now, now=now)
        value = scale_value(ladder.leaderboard_scale, shown)
        rows.append(LeaderboardRow(rank=rank, rating=rating, rd_now=rd_now, shown=shown, score=value, reasons=reasons))
    return rows


def player_row(*, rating: PlayerRating, now: datetime) -> LeaderboardRow | None:
    """``rating``'s row in its ladder's standings at ``now``, ranked as the leaderboard ranks it;
    None when it is not listed (the player left). One ranking statement on PostgreSQL."""
    return ladder_player_row(ladder=rating.ladder, player_id=rating.player_id, now=now)


def ladder_player_row(*, ladder: Ladder, player_id: int, now: datetime) -> LeaderboardRow | None:
    """``player_id``'s row in ``ladder``'s standings at ``now`` (see ``player_row``)."""
    row = store.player_row(in_sql=_player_row_sql, in_python=_player_row_in_python)
    return row(ladder=ladder, player_id=player_id, now=now)


def _player_row_sql(*, ladder: Ladder, player_id: int, now: datetime) -> LeaderboardRow | None:
    _, found = standings_sql(ladder=ladder, now=now, player_id=player_id)
    return rows_of(ladder=ladder, now=now, found=found)[0] if found else None


def _player_row_in_python(*, ladder: Ladder, player_id: int, now: datetime) -> LeaderboardRow | None:
    ranked, unranked = ladder_standings(ladder=ladder, now=now)
    return next((row for row in ranked + unranked if row.rating.player_id == player_id), None)


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
    board = store.leaderboard_page(in_sql=_leaderboard_sql, in_python=_leaderboard_in_python)
    return board(ladder=ladder, now=now, page=page, per_page=per_page, query=query, bots=bots)


def _leaderboard_in_python(
    *, ladder: Ladder, now: datetime, page: int | str | None, per_page: int, query: str, bots: str
) -> Leaderboard:
    """``ladder_leaderboard`` on other databases: every member ranked in Python (``ladder_standings``)."""
    ranked, unranked = ladder_standings(ladder=ladder, now=now)
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
    """``ladder_leaderboard`` on PostgreSQL: ranked there, only the page's rows read (see ``standings_sql``)."""
    try:
        # No page is numbered past 2³¹ (its rows' offset would not fit PostgreSQL's bigint): such a
        # number is simply past the last page, which ``get_page`` then serves.
        number = min(max(int(page or 1), 1), 2**31)
    except (TypeError, ValueError):
        number = 1
    first = slice((number - 1) * per_page, number * per_page)
    source = SqlStandings(ladder=ladder, now=now, query=query, bots=bots, first=first)
    # Paginator only counts and slices; django-stubs asks for a whole sequence.
    this_page: Page[Any] = Paginator(source, per_page).get_page(page)  # type: ignore[arg-type]
    this_page.object_list = rows_of(ladder=ladder, now=now, found=list(this_page.object_list))
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
    # Paginator only counts and slices; django-stubs asks for a whole sequence.
    this_page: Page[Any] = Paginator(OrderedStandings(order), per_page).get_page(page)  # type: ignore[arg-type]
    this_page.object_list = rows_of(ladder=ladder, now=order.at, found=list(this_page.object_list))
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


def _format(*classes: type[Any]) -> str:
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


def _public(player: User) -> User:
    """``player`` with its public fields only (no password hash or e-mail address goes to the cache)."""
    return User.from_db(player._state.db, ["id", "username", "is_bot"], [player.pk, player.username, player.is_bot])


def _slim(row: LeaderboardRow) -> LeaderboardRow:
    """``row`` with only the public fields of its player."""
    row.rating.player = _public(row.rating.player)
    return row


def _keepable(board: Leaderboard) -> Leaderboard:
    """``board`` as the cache keeps it: this page's rows alone, players reduced to what a page shows.

    The page's paginator counts a ``range`` (pickled as three numbers) instead of holding
    the ranking or the search it was cut from.
    """
    page = board.page
    rows = [_slim(row) for row in (*board.ranked, *board.provisional)]
    paginator: Paginator[Any] = Paginator(range(page.paginator.count), page.paginator.per_page)
    return dataclasses.replace(board, page=Page(rows, page.number, paginator))


_PAGE_FORMAT = _format(Leaderboard, LeaderboardRow, RankChange, PlayerRating, User, LeaderboardSnapshot)
PAGE_FORMAT = _PAGE_FORMAT  # for a key of another entry holding a pickled Leaderboard (the ladder page's)


MAX_PAGE_NUMBER = 10**9  # past any ladder's last page (so the last is shown), and its offset fits a bigint


def _page_number(page: int | str | None) -> int:
    """The page asked for, as the paginator reads it (anything else is the first page; past the last, the last)."""
    try:
        return min(max(int(page or 1), 1), MAX_PAGE_NUMBER)
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

    def cut() -> tuple[float, Leaderboard]:
        expires, order = ladder_order_cached(ladder=ladder, now=now, seconds=seconds)
        return expires, _keepable(ladder_leaderboard_in_order(ladder=ladder, order=order, page=number))

    compute, source = store.plain_page_entry(in_order=cut, ranked=ranked_for_itself, order_key=order_key(ladder.slug))
    return cached_entry(f"ladder:leaderboard:page:{where}", compute, source=source)


MOVERS_CACHE_SECONDS = 300
_MOVERS_FORMAT = _format(Movers, Mover, User)


def ladder_movers_cached(latest: LeaderboardSnapshot) -> Movers | None:
    """``movers_until(latest)``, kept ``MOVERS_CACHE_SECONDS`` in the cache.

    The movers change only with a new snapshot (a new key: a snapshot taken again for the
    same day is a new row), so every visitor of the ladder page reads them from one entry
    instead of up to three queries; a renamed player shows within the period. Players are
    kept with their public fields only.
    """

    def compute() -> Movers | None:
        movers = movers_until(latest)
        if movers is None:
            return None
        climbers = [dataclasses.replace(mover, player=_public(mover.player)) for mover in movers.climbers]
        return dataclasses.replace(movers, climbers=climbers)

    return cached(f"ladder:movers:{_MOVERS_FORMAT}:{latest.pk}", MOVERS_CACHE_SECONDS, compute)
