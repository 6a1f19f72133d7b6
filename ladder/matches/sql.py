"""Every hand-written statement of the ladder app, and the small functions that run them.

They run on PostgreSQL only: ``ladder.matches.store`` chooses them there, and otherwise
the service runs its ORM twin; the tests run both (``core.db.orm_twins()``).

A reported match takes two statements: lock the players, then record (and rate) it.
``match_report`` (``ladder.matches.reporting``) is the hot path of game servers and bots,
which report thousands of results an hour. Through the ORM a trusted report is nine
statements and as much Python building them; here it is one ``SELECT … FOR UPDATE`` of
the players' ratings (with the reporter's per-ladder trust) and one statement of
data-modifying CTEs that checks for a duplicate and, if there is none, inserts the match,
its sides, its participants, and for a report confirmed at once the rating event, its
history rows (``ratings.history.match_changes``) and the new ratings.

The duplicate check runs in the second statement, after the locks are held, so it sees
every report committed before ours (READ COMMITTED takes a snapshot per statement): two
identical reports racing each other serialise on the rating rows and the second one finds
the first.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.db import connection

from accounts.models import User
from accounts.prints import SHARED_WINDOW
from core import db
from ladder.models import Ladder, Match, MatchSide, Participant
from ladder.moderation import watch
from notifications.cte import new_notices_cte
from notifications.models import EmailStatus
from ratings import hooks
from ratings.cte import match_rating_ctes
from ratings.history import CHANGE_COLUMNS, STANDING_FIELDS, Standing
from ratings.models import PlayerRating
from ratings.services import RatedMatch


@dataclass(frozen=True, slots=True)
class LockedMember:
    """A locked rating row, as the report needs it."""

    id: int
    standing: Standing
    joined_at: datetime
    is_active: bool


_TRUSTED = Ladder.trusted_reporters.through._meta.db_table
_RATING = PlayerRating._meta.db_table

# The players' rating rows, locked in primary-key order, and whether the reporter is on
# the ladder's trusted-reporter list (every row repeats it).
# What the fair-play watch reads of the players (their marks, their prints when the ladder
# watches them: the last parameter), for a report it watches: an uncorrelated subquery, run
# once for the statement, so the watch costs the report no round trip of its own.
_WATCH_READS = (
    "(SELECT json_agg(json_build_array(w.part, w.player, w.kind, w.digest))::text FROM ("
    + watch.reads_select(players="SELECT unnest(%s::bigint[])", since="%s", prints="%s")
    + ") AS w(part, player, kind, digest))"
)


def _lock_members_sql(*, watched: bool) -> str:
    return (
        f"SELECT r.id, r.player_id, {', '.join(f'r.{field}' for field in STANDING_FIELDS)}, r.joined_at, r.is_active, "
        f"EXISTS (SELECT 1 FROM {_TRUSTED} t WHERE t.ladder_id = %s AND t.user_id = %s)"
        + (f", {_WATCH_READS} " if watched else " ")
        + f"FROM {_RATING} r WHERE r.ladder_id = %s AND r.player_id = ANY(%s) "
        "ORDER BY r.id FOR UPDATE OF r"
    )


LOCK_MEMBERS_SQL = _lock_members_sql(watched=False)
LOCK_MEMBERS_WATCHED_SQL = _lock_members_sql(watched=True)
# The same list alone, when none of the players is a member.
TRUSTED_SQL = f"SELECT EXISTS (SELECT 1 FROM {_TRUSTED} WHERE ladder_id = %s AND user_id = %s)"


def lock_members(
    ladder: Ladder, player_ids: Sequence[int], reporter_id: int, *, now: datetime | None = None
) -> tuple[dict[int, LockedMember], bool, watch.Reads | None]:
    """Lock the players' rating rows (primary-key order) and read whether the reporter is on
    the ladder's trusted-reporter list, in one statement; with ``now`` (a report the watch
    will see), what the watch reads of the players too (``watch.reads_select``)."""
    players = list(player_ids)
    params: list[Any]
    if now is None:
        statement, params = LOCK_MEMBERS_SQL, [ladder.pk, reporter_id, ladder.pk, players]
    else:
        since = now - SHARED_WINDOW
        statement = LOCK_MEMBERS_WATCHED_SQL
        params = [ladder.pk, reporter_id, players, players, since, ladder.watch_shared_prints, ladder.pk, players]
    with db.prepared_cursor() as cursor:
        cursor.execute(statement, params)
        rows = cursor.fetchall()
    if not rows:
        with connection.cursor() as cursor:
            cursor.execute(TRUSTED_SQL, [ladder.pk, reporter_id])
            return {}, cursor.fetchone()[0], None
    width = len(STANDING_FIELDS)
    members = {
        row[1]: LockedMember(row[0], Standing(*row[2 : 2 + width]), row[2 + width], row[3 + width]) for row in rows
    }
    listed = rows[0][4 + width]
    reads = None if now is None else watch.reads_of(json.loads(rows[0][5 + width] or "[]"))
    return members, listed, reads


class Notices(Protocol):
    """A match event's notifications (``ladder.matches.notices.Batch``): the kind, each recipient's data."""

    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> dict[int, dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class SideRow:
    placement: int
    answer: str
    answered_by: int | None
    answered_at: datetime | None


_MATCH = Match._meta.db_table
_SIDE = MatchSide._meta.db_table
_PARTICIPANT = Participant._meta.db_table
_USER = User._meta.db_table

# The report: insert the match, its sides and participants unless a live match of the same
# players with the same result was played in the same minute (checked after the players are
# locked; docs/rules.md §14). The statement is prepared, and PostgreSQL keeps one plan for it
# whatever the players (``plan_cache_mode``, config/settings.py), so the check comes in two
# shapes and ``record_match`` picks one by the players' history: the matches of the player
# with the fewest games (a short list), or, when every player has played many, the ladder's
# live matches of that minute (a range of its index), each compared whole.
_SAME_RESULT = f"""
      AND ARRAY(SELECT q.player_id FROM {_PARTICIPANT} q WHERE q.match_id = m.id ORDER BY q.player_id)
          = %(players)s::bigint[]
      AND ARRAY(SELECT s.placement FROM {_PARTICIPANT} q JOIN {_SIDE} s ON s.id = q.side_id
                WHERE q.match_id = m.id ORDER BY q.player_id) = %(placements)s::smallint[]
    ORDER BY m.id LIMIT 1
"""
_LIVE = "m.status IN ('pending', 'confirmed', 'disputed')"
_BY_PLAYER = f"""
WITH duplicate AS (
    SELECT m.id FROM {_MATCH} m
    WHERE m.id IN (SELECT match_id FROM {_PARTICIPANT} WHERE player_id = %(first)s)
      AND m.ladder_id = %(ladder)s AND m.played_at >= %(low)s AND m.played_at < %(high)s AND {_LIVE}{_SAME_RESULT}"""
_BY_MINUTE = f"""
WITH duplicate AS (
    SELECT m.id FROM {_MATCH} m
    WHERE m.ladder_id = %(ladder)s AND {_LIVE} AND m.played_at >= %(low)s AND m.played_at < %(high)s{_SAME_RESULT}"""
# The check by player while one of them has played at most this many games in the ladder.
SHORT_HISTORY = 300
_RECORD = f"""{{duplicate}}), new_match AS (
    INSERT INTO {_MATCH} (ladder_id, status, played_at, reported_by_id, reported_at, confirmed_at,
                          confirmation, rated_at, voided_at, voided_by_id, moderator_note, created_at)
    SELECT %(ladder)s, %(status)s, %(played_at)s, %(reporter)s, %(now)s, %(confirmed_at)s,
           %(confirmation)s, %(confirmed_at)s, NULL, NULL, '', %(now)s
    WHERE NOT EXISTS (SELECT 1 FROM duplicate)
    RETURNING id
), new_sides AS (
    INSERT INTO {_SIDE} (match_id, index, placement, answer, answered_by_id, answered_at, dispute_reason)
    SELECT new_match.id, s.index - 1, s.placement, s.answer, s.answered_by, s.answered_at, ''
    FROM new_match, unnest(%(side_placement)s::smallint[], %(side_answer)s::varchar[],
                           %(side_by)s::bigint[], %(side_at)s::timestamptz[])
                    WITH ORDINALITY AS s(placement, answer, answered_by, answered_at, index)
    ORDER BY s.index
    RETURNING id, index, placement
), new_participants AS (
    INSERT INTO {_PARTICIPANT} (match_id, side_id, player_id)
    SELECT new_match.id, new_sides.id, p.player
    FROM new_match, unnest(%(player_side)s::smallint[], %(player)s::bigint[]) WITH ORDINALITY AS p(side, player, n)
    JOIN new_sides ON new_sides.index = p.side
    ORDER BY p.n
    RETURNING id, player_id, side_id
){{rating}}, {new_notices_cte(match="new_match")}
SELECT (SELECT id FROM new_match), (SELECT id FROM duplicate),
       (SELECT count(*) FROM new_notices WHERE email_status = '{EmailStatus.PENDING.value}')
"""

# A report confirmed at once also inserts the rating event and its history rows and
# updates the ratings, in the same statement (their CTEs are ``ratings``').
_RATE = match_rating_ctes(match="new_match", rows="arrays")
# A report rated at once without match-field values (written after the statement) also carries
# the apps that count rated matches (``ratings.hooks.rated_ctes``: the head-to-head records),
# which read its results from this CTE (``ratings.hooks.RESULT_COLUMNS``).
_RESULT_OF = {
    "match_id": "c.match_id",
    "player_id": "c.player_id",
    "side_id": "p.side_id",
    "side_index": "s.index",
    "placement": "s.placement",
    "score": "c.score",
    "r": "c.rating_before",
    "rd": "c.rd_at_event",
}
_RESULTS = f""", rated_results AS (
    SELECT {", ".join(f"{_RESULT_OF[column]} AS {column}" for column in hooks.RESULT_COLUMNS)}
    FROM new_changes c JOIN new_participants p ON p.player_id = c.player_id JOIN new_sides s ON s.id = p.side_id
)"""


@functools.cache
def record_statement(*, rated: bool, by_player: bool, composed: bool = False) -> db.Statement:
    """The report's statement: rated at once or not, its duplicate check by player or by minute, and
    with the counting apps' CTEs (``composed``, rated only).

    Over psycopg's 4,096 bytes, so converted to PostgreSQL's $n placeholders once
    (``core.db.Statement``); built on first use, once every app has registered its CTEs.
    """
    rating = ""
    if rated:
        rating = _RATE + (_RESULTS + hooks.rated_ctes("rated_results") if composed else "")
    return db.Statement.of(
        _RECORD.replace("{rating}", rating).replace("{duplicate}", _BY_PLAYER if by_player else _BY_MINUTE)
    )


def record_match(
    *,
    ladder: Ladder,
    status: str,
    played_at: datetime,
    reporter_id: int,
    now: datetime,
    confirmation: str,
    duplicate_window: tuple[datetime, datetime],
    layout: Sequence[Sequence[int]],
    sides: Sequence[SideRow],
    rated: RatedMatch | None,
    members: dict[int, LockedMember],
    notices: Notices,
    composed: bool = False,
) -> tuple[int | None, int | None, int]:
    """Insert the match unless a live match of the same players with the same result was played within the window.

    Returns ``(new match id, None, mails)``, or ``(None, duplicate's id, 0)`` with nothing
    written. With ``rated``, the match is confirmed and its rating event, history rows and
    new ratings are written in the same statement. ``notices`` are its notifications,
    inserted by the statement too (once per recipient); ``mails`` counts those that wait
    for a mail (the recipient's address is verified). ``composed`` (with ``rated``): the
    statement also does the work of the ``ratings.hooks`` callbacks that gave CTEs, for a
    match that will have no match-field values; the caller then tells ``matches_rated`` so.
    """
    players = [player for side in layout for player in side]
    placed = [(player, row.placement) for side, row in zip(layout, sides, strict=True) for player in side]
    # The player with the fewest games here (none for a player without a rating row yet).
    games = {player: members[player].standing.games if player in members else 0 for player in players}
    first = min(players, key=lambda player: (games[player], player))
    by_player = games[first] <= SHORT_HISTORY
    params: dict[str, Any] = {
        "ladder": ladder.pk,
        "low": duplicate_window[0],
        "high": duplicate_window[1],
        "first": first,
        "players": sorted(players),
        "placements": [placement for _, placement in sorted(placed)],
        "status": status,
        "played_at": played_at,
        "reporter": reporter_id,
        "now": now,
        "confirmed_at": now if rated is not None else None,
        "confirmation": confirmation,
        "side_placement": [side.placement for side in sides],
        "side_answer": [side.answer for side in sides],
        "side_by": [side.answered_by for side in sides],
        "side_at": [side.answered_at for side in sides],
        "player_side": [index for index, side in enumerate(layout) for _ in side],
        "player": players,
    }
    if rated is not None:
        params.update(_rating_params(rated, members))
    params["n_kind"] = notices.kind
    params["n_recipient"] = list(notices.data)
    params["n_data"] = [json.dumps(data) for data in notices.data.values()]
    statement = record_statement(rated=rated is not None, by_player=by_player, composed=composed and rated is not None)
    with db.run_statement(statement, params) as cursor:
        match_id, duplicate_id, mails = cursor.fetchone()
    return match_id, duplicate_id, mails


def _rating_params(rated: RatedMatch, members: dict[int, LockedMember]) -> dict[str, Any]:
    """The history rows as one array per column (``c_`` and the column), the new ratings likewise (``r_``)."""
    params: dict[str, Any] = {
        f"c_{name}": list(values) for name, values in zip(CHANGE_COLUMNS, zip(*rated.changes, strict=True), strict=True)
    }
    after = list(rated.after.items())
    params["r_id"] = [members[player].id for player, _ in after]
    for field in STANDING_FIELDS:
        params[f"r_{field}"] = [getattr(standing, field) for _, standing in after]
    params["engine"] = str(rated.settings["engine"])
    params["engine_params"] = json.dumps(rated.settings)
    return params
