"""The standings room's seam to the database: each of its rankings in its PostgreSQL and its ORM form.

Each function here is one ranking (a player's row, a leaderboard page, a cached plain page,
the nightly snapshot) and chooses, in one place, between its hand-written SQL (PostgreSQL)
and its twin that ranks in Python over the ORM's rows (other databases: ``make run``'s
SQLite), through ``core.db.on_postgresql()``; callers never ask which database they are on.
The tests run both sides (``core.db.orm_twins()`` makes PostgreSQL take the twins).

Both versions follow ``ladder.standings.ranking`` and build the leaderboard's own rows: the
SQL is ``ladder.standings.leaderboard_sql``'s and the nightly snapshot's, the Python ranking
is ``ladder.standings.leaderboard.ladder_standings``. Those modules call this one, so they
hand both versions in and this module gives back the one to run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from core import db

Version = TypeVar("Version", bound=Callable[..., Any])


def player_row(*, in_sql: Version, in_python: Version) -> Version:
    """One player's row of a ladder's standings (``leaderboard.ladder_player_row``): one ranking
    statement on PostgreSQL (``leaderboard_sql.standings_sql``)."""
    return in_sql if db.on_postgresql() else in_python


def leaderboard_page(*, in_sql: Version, in_python: Version) -> Version:
    """One page of the leaderboard (``leaderboard.ladder_leaderboard``): ranked on PostgreSQL, only
    the page's rows read (``leaderboard_sql.SqlStandings``)."""
    return in_sql if db.on_postgresql() else in_python


def plain_page_entry(*, in_order: Version, ranked: Version, order_key: str) -> tuple[Version, str | None]:
    """How a plain leaderboard page (no search, no bot filter) is cached, and what its entry expires
    with: on PostgreSQL cut from the ladder's cached ranking (``in_order``), with that ranking's
    entry (``order_key``); on other databases ranked for itself (``ranked``), on its own."""
    if db.on_postgresql():
        return in_order, order_key
    return ranked, None


def snapshot_ranking(*, in_sql: Version, in_python: Version) -> Version:
    """The nightly snapshot's ranking (``nightly.leaderboard_snapshot``): a top-N sort and a count
    on PostgreSQL, no row leaving the server but the N kept."""
    return in_sql if db.on_postgresql() else in_python
