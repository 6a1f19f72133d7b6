"""The rating tables' part of other apps' statements: a rated match's event, history rows and ratings.

A report or a confirmation on PostgreSQL writes its match, its sides and its rating in one
statement of data-modifying CTEs (``ladder.matches.sql``, ``ladder.matches.answers_sql``).
The CTEs that write this app's tables are built here, so ``ratings`` stays the only writer
of ``RatingEvent``, ``RatingChange`` and ``PlayerRating`` rows; the ladder composes them
into its statement. Their parameters: ``%(ladder)s``, ``%(played_at)s``, ``%(now)s``,
``%(engine)s``, ``%(engine_params)s`` and the rows, as arrays (``c_`` and each history
column, ``r_id`` and ``r_`` and each standing field) or as JSON (``%(changes)s``,
``%(ratings)s``).
"""

from __future__ import annotations

from typing import Literal

from ratings.history import CHANGE_COLUMNS, STANDING_FIELDS
from ratings.models import ChangeKind, EventKind, PlayerRating, RatingChange, RatingEvent
from ratings.sql import CHANGE_TYPES, STANDING_TYPES

_EVENT = RatingEvent._meta.db_table
_CHANGE = RatingChange._meta.db_table
_RATING = PlayerRating._meta.db_table
_CHANGE_DEFINITION = ", ".join(f"{column} {kind}" for column, kind in CHANGE_TYPES.items())
_STANDING_DEFINITION = ", ".join(f"{field} {kind}" for field, kind in STANDING_TYPES.items())


def match_rating_ctes(*, match: Literal["new_match", "param"], rows: Literal["arrays", "json"]) -> str:
    """``, new_event AS (…), new_changes AS (…), rated AS (…)``: a rated match's writes, to follow a CTE.

    ``new_changes`` returns the history rows' ``id, match_id, player_id, score, rating_before,
    rd_at_event``: with the sides, what ``ratings.hooks.rated_ctes`` count (``RESULT_COLUMNS``).

    ``match`` says where the match's id comes from: the statement's own ``new_match`` CTE
    (nothing is written when it inserted no match) or the ``%(match)s`` parameter. ``rows``
    says how the history rows and new ratings come: one array per column, or JSON.
    """
    columns = ", ".join(CHANGE_COLUMNS)
    if match == "new_match":
        event = (
            f"    SELECT %(ladder)s, '{EventKind.MATCH.value}', new_match.id, NULL, true, %(played_at)s, %(now)s"
            " FROM new_match\n"
        )
        match_id, also_from, only_if = "new_match.id", ", new_match", " AND EXISTS (SELECT 1 FROM new_match)"
    else:
        event = f"    VALUES (%(ladder)s, '{EventKind.MATCH.value}', %(match)s, NULL, true, %(played_at)s, %(now)s)\n"
        match_id, also_from, only_if = "%(match)s", "", ""
    if rows == "arrays":
        changes = (
            f"unnest({', '.join(f'%(c_{column})s::{kind}[]' for column, kind in CHANGE_TYPES.items())})\n"
            f"         WITH ORDINALITY AS c({columns}, n)\n    ORDER BY c.n"
        )
        standings = ", ".join(f"%(r_{field})s::{kind}[]" for field, kind in STANDING_TYPES.items())
        ratings = f"unnest(%(r_id)s::bigint[], {standings})\n         AS v(id, {', '.join(STANDING_FIELDS)})"
    else:
        changes = (
            f"ROWS FROM (jsonb_to_recordset(%(changes)s::jsonb) AS ({_CHANGE_DEFINITION}))\n"
            f"         WITH ORDINALITY AS c({columns}, number)\n    ORDER BY c.number"
        )
        ratings = f"jsonb_to_recordset(%(ratings)s::jsonb) AS v(id int8, {_STANDING_DEFINITION})"
    return f""", new_event AS (
    INSERT INTO {_EVENT} (ladder_id, kind, match_id, adjustment_id, is_active, at, created_at)
{event}    RETURNING id
), new_changes AS (
    INSERT INTO {_CHANGE} (event_id, ladder_id, match_id, kind, engine, engine_params, created_at,
                           {columns})
    SELECT new_event.id, %(ladder)s, {match_id}, '{ChangeKind.MATCH.value}', %(engine)s, %(engine_params)s::jsonb,
           %(now)s, {", ".join(f"c.{column}" for column in CHANGE_COLUMNS)}
    FROM new_event{also_from}, {changes}
    RETURNING id, match_id, player_id, score, rating_before, rd_at_event
), rated AS (
    UPDATE {_RATING} AS r
    SET {", ".join(f"{field} = v.{field}" for field in STANDING_FIELDS)}
    FROM {ratings}
    WHERE r.id = v.id{only_if}
    RETURNING r.id
)"""
