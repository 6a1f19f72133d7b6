"""A paired or formed game written in one statement on PostgreSQL: its match, sides, players and searches.

The ORM takes four statements for it (the match, its sides, its players, then the searches),
each built anew in Python; ``store.formed_create`` keeps them as the twin other databases run,
for ``forming._create`` and ``pairing._pair`` (a 1 v 1 pairing).
Here one statement of data-modifying CTEs inserts the match, then its sides (each with the
match's new id), then its players (each with its side's), and matches the searches, and
returns the match's id. The rows' values are the model instances' own, as ``save()`` would
send them (defaults, ``auto_now`` stamps, every column), so a new column needs nothing here.
One statement for each shape of game (which side each player is on), prepared once per
connection (``core.db.run_statement``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Field, Model

from core import db
from ladder.models import Match, MatchSide, Participant
from matchmaking.models import EntryStatus, QueueEntry

# Written by the statement itself, from the rows it inserts before.
_LINKS = {MatchSide: ("match_id",), Participant: ("match_id", "side_id")}


def _fields(model: type[Model]) -> list[Field[Any, Any]]:
    return db.insert_fields(model, skip=_LINKS.get(model, ()))


def _row(prefix: str, model: type[Model]) -> str:
    return ", ".join(f"%({prefix}_{field.attname})s" for field in _fields(model))


def _columns(model: type[Model]) -> str:
    return ", ".join(f'"{field.column}"' for field in _fields(model))


@cache
def statement(seating: tuple[int, ...], sides: int) -> db.Statement:
    """The statement for a game of ``sides`` sides whose players sit on the sides ``seating`` lists."""
    match_id = "(SELECT id FROM m)"
    side_rows = ", ".join(f"({match_id}, {_row(f's{index}', MatchSide)})" for index in range(sides))
    player_rows = ", ".join(
        f"({match_id}, (SELECT id FROM s WHERE index = {side}), {_row(f'p{number}', Participant)})"
        for number, side in enumerate(seating)
    )
    return db.Statement.of(
        f"WITH m AS (INSERT INTO {Match._meta.db_table} ({_columns(Match)}) VALUES ({_row('m', Match)}) RETURNING id),"
        f" s AS (INSERT INTO {MatchSide._meta.db_table} (match_id, {_columns(MatchSide)}) VALUES {side_rows}"
        " RETURNING id, index),"
        f" p AS (INSERT INTO {Participant._meta.db_table} (match_id, side_id, {_columns(Participant)})"
        f" VALUES {player_rows}),"
        f" e AS (UPDATE {QueueEntry._meta.db_table} AS e SET status = %(matched)s, match_id = {match_id},"
        " ended_at = %(now)s, win_probability = v.chance, opponent_id = v.opponent"
        " FROM unnest(%(entries)s::bigint[], %(chances)s::float8[], %(opponents)s::bigint[])"
        " AS v (id, chance, opponent) WHERE e.id = v.id)"
        " SELECT id FROM m"
    )


def _values(prefix: str, instance: Model, params: dict[str, Any]) -> None:
    db.insert_values(instance, _fields(type(instance)), prefix, params)


def create_formed(
    match: Match,
    sides: Sequence[MatchSide],
    players: Sequence[Participant],
    seating: Sequence[int],
    entries: Sequence[int],
    chances: Sequence[float],
    now: datetime,
    opponents: Sequence[int | None] | None = None,
) -> None:
    """Insert ``match`` (unsaved), its ``sides`` and ``players`` (the side index of each in
    ``seating``), and match the searches ``entries`` to it, each with its chance and (a
    1 v 1) its opponent's player; ``match`` then has its primary key."""
    params: dict[str, Any] = {
        "matched": EntryStatus.MATCHED.value,
        "now": now,
        "entries": list(entries),
        "chances": list(chances),
        "opponents": list(opponents) if opponents is not None else [None] * len(entries),
    }
    _values("m", match, params)
    for side in sides:
        _values(f"s{side.index}", side, params)
    for number, player in enumerate(players):
        _values(f"p{number}", player, params)
    with db.run_statement(statement(tuple(seating), len(sides)), params) as cursor:
        (match.pk,) = cursor.fetchone()
    match._state.adding = False
    match._state.db = connection.alias
