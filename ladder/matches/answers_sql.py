"""The hand-written statements of a queue match's result: its report and its confirmation.

``match_report_result`` and ``match_confirm`` (``ladder.matches.answers``) take two
statements each on PostgreSQL, as a trusted report does (``ladder.matches.sql``): ``read_locked``
locks the match, its sides and its players' ratings and reads everything the checks and
the rating need (the ladder, the players, the reporter's per-ladder trust, whether a
suspension is in force); ``write_answer`` then writes the sides, the match, for a rated
match its rating event, history rows and new ratings, and the notifications, as one
statement of data-modifying CTEs. Other databases run the ORM twins in
``ladder.matches.reporting``.

The sides and ratings are locked, not only read: a player who waited for the match's lock
(the opponent's answer committing) then reads their newest versions, as the ORM twin's
later statements would (READ COMMITTED takes the snapshot when the statement starts).
The match is locked first, then its sides, then the ratings in primary-key order, the
order every other path that changes them takes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Model

from accounts.models import User
from accounts.prints import SHARED_WINDOW
from core import db
from ladder.matches.sql import LockedMember, Notices
from ladder.models import Ladder, Match, MatchSide, Participant, Suspension
from ladder.moderation import watch
from notifications.cte import new_notices_cte, read_notices_cte
from notifications.models import EmailStatus, Kind
from ratings.cte import match_rating_ctes
from ratings.history import CHANGE_COLUMNS, STANDING_FIELDS, Standing
from ratings.models import PlayerRating
from ratings.services import RatedMatch
from ratings.sql import STANDING_TYPES

_MATCH = Match._meta.db_table
_LADDER = Ladder._meta.db_table
_SIDE = MatchSide._meta.db_table
_PARTICIPANT = Participant._meta.db_table
_USER = User._meta.db_table
_RATING = PlayerRating._meta.db_table
_TRUSTED = Ladder.trusted_reporters.through._meta.db_table
_SUSPENSION = Suspension._meta.db_table


def _columns(model: type[Model], alias: str) -> tuple[list[Any], str]:
    fields = list(model._meta.concrete_fields)
    return fields, ", ".join(f'{alias}."{field.column}"' for field in fields)


_MATCH_FIELDS, _MATCH_COLUMNS = _columns(Match, "m")
_LADDER_FIELDS, _LADDER_COLUMNS = _columns(Ladder, "l")

# One row: the match, its ladder, the two flags, and every side and player as a JSON array
# (sides by index, players by participant id; a side without players has one element too);
# no row when the match does not exist. The players come as JSON because a timestamp read
# through Django's loader costs 10 µs, and they are most of the timestamps.
_PLAYER_COLUMNS = [
    "s.id", "s.index", "s.placement", "s.answer", "s.answered_by_id", "s.answered_at",
    "p.id", "p.player_id", "u.username", "u.is_active",
    "coalesce(u.is_active AND u.email <> '' AND lower(u.email) = lower(u.email_verified), false)",
    "r.id", *(f"r.{field}" for field in STANDING_FIELDS), "r.joined_at", "r.is_active",
]  # fmt: skip
# What the fair-play watch reads of a reported result's players (their marks, their prints
# when the ladder watches them), so that reading it costs the report no round trip of its own.
_WATCH_READS = watch.reads_select(
    players=f"SELECT player_id FROM {_PARTICIPANT} WHERE match_id = m.id",
    since="%(prints_since)s",
    prints="l.watch_shared_prints",
)
_READ = f"""
WITH m AS MATERIALIZED (
    SELECT * FROM {_MATCH} WHERE id = %(match)s FOR UPDATE
), s AS MATERIALIZED (
    SELECT id, index, placement, answer, answered_by_id, answered_at FROM {_SIDE}
    WHERE match_id = (SELECT id FROM m) ORDER BY id FOR UPDATE
), r AS MATERIALIZED (
    SELECT r.id, r.player_id, {", ".join(f"r.{field}" for field in STANDING_FIELDS)}, r.joined_at, r.is_active
    FROM {_RATING} r
    WHERE r.ladder_id = (SELECT ladder_id FROM m)
      AND r.player_id IN (SELECT p.player_id FROM {_PARTICIPANT} p WHERE p.side_id IN (SELECT id FROM s))
    ORDER BY r.id FOR UPDATE
)
SELECT {_MATCH_COLUMNS}, {_LADDER_COLUMNS},
       EXISTS (SELECT 1 FROM {_TRUSTED} t WHERE t.ladder_id = m.ladder_id AND t.user_id = %(user)s),
       EXISTS (SELECT 1 FROM {_SUSPENSION} x
               WHERE x.ladder_id = m.ladder_id AND x.starts_at <= %(now)s AND x.lifted_at IS NULL
                 AND (x.ends_at IS NULL OR x.ends_at > %(now)s)
                 AND (x.player_id = %(user)s
                      OR x.player_id IN (SELECT player_id FROM {_PARTICIPANT} WHERE match_id = m.id))),
       (SELECT json_agg(json_build_array({", ".join(_PLAYER_COLUMNS)}) ORDER BY s.index, p.id)::text
        FROM s LEFT JOIN ({_PARTICIPANT} p JOIN {_USER} u ON u.id = p.player_id) ON p.side_id = s.id
        LEFT JOIN r ON r.player_id = p.player_id),
       (SELECT json_agg(json_build_array(w.part, w.player, w.kind, w.digest))::text
        FROM ({_WATCH_READS}) AS w(part, player, kind, digest))
FROM m JOIN {_LADDER} l ON l.id = m.ladder_id
"""
READ = db.Statement.of(_READ)


@dataclass(slots=True)
class SideState:
    """A locked side as the answer changes it."""

    id: int
    index: int
    placement: int | None
    answer: str
    answered_by: int | None
    answered_at: datetime | None
    players: list[tuple[int, str]]  # (id, username), by participant id


@dataclass(frozen=True, slots=True)
class Player:
    id: int
    username: str
    is_active: bool
    mailable: bool  # an active account with a verified address: notifications are mailed


@dataclass(frozen=True, slots=True)
class LockedMatch:
    """What ``read_locked`` read: the match and its ladder (as model instances), the sides, the players, the ratings."""

    match: Match
    sides: list[SideState]  # every side, by index
    players: list[Player]  # by side, then participant id
    members: dict[int, LockedMember]  # player id → locked rating row
    listed: bool  # the user is on the ladder's trusted-reporter list
    suspended: bool  # a suspension of the user or a player is in force
    watched: watch.Reads  # the players' prints and marks, for the fair-play watch


def _instance(model: type[Model], fields: Sequence[Any], values: Sequence[Any]) -> Any:
    """A model instance from a row, converted as the ORM converts it (a JSON field's text)."""
    converted = [
        field.from_db_value(value, None, connection) if hasattr(field, "from_db_value") else value
        for field, value in zip(fields, values, strict=True)
    ]
    return model.from_db(connection.alias, [field.attname for field in fields], converted)


def read_locked(match_id: int, user_id: int, now: datetime) -> LockedMatch | None:
    """Lock ``match_id`` with its sides and its players' ratings and read them (``None``: no such match)."""
    params = {"match": match_id, "user": user_id, "now": now, "prints_since": now - SHARED_WINDOW}
    with db.run_statement(READ, params) as cursor:
        row = cursor.fetchone()
    if row is None:
        return None
    count, rest = len(_MATCH_FIELDS), len(_MATCH_FIELDS) + len(_LADDER_FIELDS)
    match = _instance(Match, _MATCH_FIELDS, row[:count])
    match.ladder = _instance(Ladder, _LADDER_FIELDS, row[count:rest])
    listed, suspended, elements, reads = row[rest:]
    sides: dict[int, SideState] = {}
    players, members = [], {}
    width = len(STANDING_FIELDS)
    for element in json.loads(elements or "[]"):
        side_id, index, placement, answer, answered_by, answered_at, participant = element[:7]
        side = sides.get(side_id)
        if side is None:
            side = SideState(side_id, index, placement, answer, answered_by, _time(answered_at), [])
            sides[side_id] = side
        if participant is None:
            continue
        player, username, is_active, mailable, rating_id = element[7:12]
        side.players.append((player, username))
        players.append(Player(player, username, is_active, mailable))
        if rating_id is not None:
            values = element[12 : 12 + width]
            standing = Standing(*(_time(v) if f in _TIMES else v for f, v in zip(STANDING_FIELDS, values, strict=True)))
            joined_at, member_active = element[12 + width :]
            members[player] = LockedMember(rating_id, standing, _time(joined_at), member_active)
    watched = watch.reads_of(json.loads(reads or "[]"))
    return LockedMatch(match, list(sides.values()), players, members, listed, suspended, watched)


_TIMES = {field for field, kind in STANDING_TYPES.items() if kind == "timestamptz"}


def _time(value: str | None) -> Any:  # a datetime, or None for a NULL
    """A timestamp as PostgreSQL writes it in JSON (ISO 8601, with the session's offset, UTC)."""
    return None if value is None else datetime.fromisoformat(value)


# The answer: the sides and the match as the service left them, then (``{rating}``) the
# rating event, its history rows and the new ratings, then the notifications (once per
# recipient and key: a recipient told already is skipped). Each table's rows come as one
# JSON array: psycopg dumps a Python list as an array parameter in about 20 µs, a rated
# confirmation's 30 of them took half a millisecond, and ``json.dumps`` takes 60 µs for
# them all. Floats go through JSON unchanged (Python writes the shortest text that reads
# back as the same double, and PostgreSQL reads it so).
# What asked a side for its answer: read once the side has answered (``notices.answered_read``).
ANSWERED_KINDS = (Kind.RESULT_AWAITING, Kind.CONFIRM_REMINDER)

_WRITE = f"""
WITH sides AS (
    UPDATE {_SIDE} AS s
    SET placement = v.placement, answer = v.answer, answered_by_id = v.answered_by, answered_at = v.answered_at
    FROM jsonb_to_recordset(%(sides)s::jsonb)
         AS v(id int8, placement int2, answer text, answered_by int8, answered_at timestamptz)
    WHERE s.id = v.id
    RETURNING s.id
), answered AS (
    UPDATE {_MATCH}
    SET status = %(status)s, reported_by_id = %(reported_by)s, reported_at = %(reported_at)s,
        confirmation = %(confirmation)s, confirmed_at = %(confirmed_at)s, rated_at = %(rated_at)s
    WHERE id = %(match)s
    RETURNING id
){{rating}}, {new_notices_cte(match="param")}, {read_notices_cte(kind.value for kind in ANSWERED_KINDS)}
SELECT (SELECT count(*) FROM sides), (SELECT count(*) FROM answered), (SELECT count(*) FROM new_notices)
"""

_RATE = match_rating_ctes(match="param", rows="json")  # ``ratings``' CTEs

WRITE = db.Statement.of(_WRITE.replace("{rating}", ""))
WRITE_AND_RATE = db.Statement.of(_WRITE.replace("{rating}", _RATE))


def _json(rows: list[dict[str, Any]]) -> str:
    return json.dumps(rows, default=_iso)


def _iso(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not written as JSON here")


def _email_status(mailable: bool) -> str:
    return str(EmailStatus.PENDING.value if mailable else EmailStatus.NONE.value)


def write_answer(
    locked: LockedMatch,
    *,
    now: datetime,
    rated: RatedMatch | None,
    notices: Notices | None,
    mailable: set[int],
    read_for: Sequence[int] = (),
) -> None:
    """Write ``locked``'s sides and match as they now are, the rating when ``rated``, and ``notices``;
    mark read what asked the players ``read_for`` (a side that just answered) for their answer."""
    match, sides = locked.match, locked.sides
    params: dict[str, Any] = {
        "match": match.pk,
        "ladder": match.ladder_id,
        "now": now,
        "played_at": match.played_at,
        "sides": _json(
            [
                {
                    "id": side.id,
                    "placement": side.placement,
                    "answer": side.answer,
                    "answered_by": side.answered_by,
                    "answered_at": side.answered_at,
                }
                for side in sides
            ]
        ),
        "status": match.status,
        "reported_by": match.reported_by_id,
        "reported_at": match.reported_at,
        "confirmation": match.confirmation,
        "confirmed_at": match.confirmed_at,
        "rated_at": match.rated_at,
        "read_for": list(read_for),
        "n_kind": notices.kind if notices else "",
        "n_key": f"match:{match.pk}",
        "notices": _json(
            [
                {"recipient": pk, "data": data, "status": _email_status(pk in mailable)}
                for pk, data in (notices.data.items() if notices else ())
            ]
        ),
    }
    if rated is not None:
        params["changes"] = _json([dict(zip(CHANGE_COLUMNS, row, strict=True)) for row in rated.changes])
        params["ratings"] = _json(
            [
                {"id": locked.members[player].id, **{field: getattr(standing, field) for field in STANDING_FIELDS}}
                for player, standing in rated.after.items()
            ]
        )
        params["engine"] = str(rated.settings["engine"])
        params["engine_params"] = json.dumps(rated.settings)
    with db.run_statement(WRITE if rated is None else WRITE_AND_RATE, params) as cursor:
        cursor.fetchone()
