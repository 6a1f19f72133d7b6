"""A reported match in two statements on PostgreSQL: lock the players, then record (and rate) it.

``match_report`` is the hot path of game servers and bots, which report thousands of
results an hour. Through the ORM a trusted report is nine statements and as much Python
building them; here it is one ``SELECT … FOR UPDATE`` of the players' ratings (with the
reporter's per-ladder trust) and one statement of data-modifying CTEs that checks for a
duplicate and, if there is none, inserts the match, its sides, its participants, and for a
report confirmed at once the rating event, its history rows and the new ratings.

The duplicate check runs in the second statement, after the locks are held, so it sees
every report committed before ours (READ COMMITTED takes a snapshot per statement): two
identical reports racing each other serialise on the rating rows and the second one finds
the first. ``match_report`` keeps the ORM path for other databases; the tests run both.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from core import db
from ladder.models import Ladder, Match, MatchSide, Participant
from ratings.history import Standing
from ratings.models import ChangeKind, EventKind, PlayerRating, RatingChange, RatingEvent
from ratings.services import RatedMatch


@dataclass(frozen=True, slots=True)
class LockedMember:
    """A locked rating row, as the report needs it."""

    id: int
    standing: Standing
    joined_at: datetime
    is_active: bool


def lock_members(ladder: Ladder, player_ids: Sequence[int], reporter_id: int) -> tuple[dict[int, LockedMember], bool]:
    """Lock the players' rating rows (primary-key order) and read whether the reporter is on
    the ladder's trusted-reporter list, in one statement."""
    trusted_table = Ladder.trusted_reporters.through._meta.db_table
    with db.prepared_cursor() as cursor:
        cursor.execute(
            "SELECT r.id, r.player_id, r.rating, r.rd, r.volatility, r.rd_as_of, r.games, r.wins, r.losses, "
            "r.draws, r.last_played_at, r.joined_at, r.is_active, "
            f"EXISTS (SELECT 1 FROM {trusted_table} t WHERE t.ladder_id = %s AND t.user_id = %s) "
            f"FROM {PlayerRating._meta.db_table} r WHERE r.ladder_id = %s AND r.player_id = ANY(%s) "
            "ORDER BY r.id FOR UPDATE OF r",
            [ladder.pk, reporter_id, ladder.pk, list(player_ids)],
        )
        rows = cursor.fetchall()
    if not rows:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT EXISTS (SELECT 1 FROM {trusted_table} WHERE ladder_id = %s AND user_id = %s)",
                [ladder.pk, reporter_id],
            )
            return {}, cursor.fetchone()[0]
    members = {
        player: LockedMember(pk, Standing(*standing), joined_at, is_active)
        for pk, player, *standing, joined_at, is_active, _ in rows
    }
    return members, rows[0][-1]


@dataclass(frozen=True, slots=True)
class SideRow:
    placement: int
    answer: str
    answered_by: int | None
    answered_at: datetime | None


_MATCH = Match._meta.db_table
_SIDE = MatchSide._meta.db_table
_PARTICIPANT = Participant._meta.db_table
_EVENT = RatingEvent._meta.db_table
_CHANGE = RatingChange._meta.db_table
_RATING = PlayerRating._meta.db_table

_RECORD = f"""
WITH duplicate AS (
    SELECT m.id FROM {_MATCH} m
    WHERE m.ladder_id = %(ladder)s AND m.played_at BETWEEN %(low)s AND %(high)s
      AND m.status NOT IN ('void', 'scheduled')
      AND m.id IN (SELECT match_id FROM {_PARTICIPANT} WHERE player_id = %(first)s)
      AND ARRAY(SELECT q.player_id FROM {_PARTICIPANT} q WHERE q.match_id = m.id ORDER BY q.player_id)
          = %(players)s::bigint[]
    ORDER BY m.id LIMIT 1
), new_match AS (
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
    RETURNING id, index
), new_participants AS (
    INSERT INTO {_PARTICIPANT} (match_id, side_id, player_id)
    SELECT new_match.id, new_sides.id, p.player
    FROM new_match, unnest(%(player_side)s::smallint[], %(player)s::bigint[]) WITH ORDINALITY AS p(side, player, n)
    JOIN new_sides ON new_sides.index = p.side
    ORDER BY p.n
    RETURNING id
){{rating}}
SELECT (SELECT id FROM new_match), (SELECT id FROM duplicate)
"""

_RATE = f""", new_event AS (
    INSERT INTO {_EVENT} (ladder_id, kind, match_id, adjustment_id, is_active, at, created_at)
    SELECT %(ladder)s, '{EventKind.MATCH.value}', new_match.id, NULL, true, %(played_at)s, %(now)s FROM new_match
    RETURNING id
), new_changes AS (
    INSERT INTO {_CHANGE} (event_id, ladder_id, player_id, match_id, kind, rating_before, rd_before,
                           volatility_before, rd_as_of_before, rd_at_event, rating_after, rd_after,
                           volatility_after, rd_as_of_after, expected, score, delta, engine, engine_params,
                           created_at)
    SELECT new_event.id, %(ladder)s, c.player, new_match.id, '{ChangeKind.MATCH.value}', c.rating_before,
           c.rd_before, c.volatility_before, c.rd_as_of_before, c.rd_at_event, c.rating_after, c.rd_after,
           c.volatility_after, c.rd_as_of_after, c.expected, c.score, c.delta, %(engine)s,
           %(engine_params)s::jsonb, %(now)s
    FROM new_event, new_match, unnest(
        %(c_player)s::bigint[], %(c_rating_before)s::float8[], %(c_rd_before)s::float8[],
        %(c_volatility_before)s::float8[], %(c_rd_as_of_before)s::timestamptz[], %(c_rd_at_event)s::float8[],
        %(c_rating_after)s::float8[], %(c_rd_after)s::float8[], %(c_volatility_after)s::float8[],
        %(c_rd_as_of_after)s::timestamptz[], %(c_expected)s::float8[], %(c_score)s::float8[], %(c_delta)s::float8[]
    ) WITH ORDINALITY AS c(player, rating_before, rd_before, volatility_before, rd_as_of_before, rd_at_event,
                           rating_after, rd_after, volatility_after, rd_as_of_after, expected, score, delta, n)
    ORDER BY c.n
    RETURNING id
), rated AS (
    UPDATE {_RATING} AS r
    SET rating = v.rating, rd = v.rd, volatility = v.volatility, rd_as_of = v.rd_as_of, games = v.games,
        wins = v.wins, losses = v.losses, draws = v.draws, last_played_at = v.last_played_at
    FROM unnest(%(r_id)s::bigint[], %(r_rating)s::float8[], %(r_rd)s::float8[], %(r_volatility)s::float8[],
                %(r_rd_as_of)s::timestamptz[], %(r_games)s::int[], %(r_wins)s::int[], %(r_losses)s::int[],
                %(r_draws)s::int[], %(r_last_played_at)s::timestamptz[])
         AS v(id, rating, rd, volatility, rd_as_of, games, wins, losses, draws, last_played_at)
    WHERE r.id = v.id AND EXISTS (SELECT 1 FROM new_match)
    RETURNING r.id
)"""

RECORD_SQL = _RECORD.replace("{rating}", "")
RECORD_AND_RATE_SQL = _RECORD.replace("{rating}", _RATE)


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
) -> tuple[int | None, int | None]:
    """Insert the match unless a live match of the same players is within the window.

    Returns ``(new match id, None)``, or ``(None, duplicate's id)`` with nothing written.
    With ``rated``, the match is confirmed and its rating event, history rows and new
    ratings are written in the same statement.
    """
    players = [player for side in layout for player in side]
    params: dict[str, object] = {
        "ladder": ladder.pk,
        "low": duplicate_window[0],
        "high": duplicate_window[1],
        "first": min(players),
        "players": sorted(players),
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
        params.update(_rating_params(rated, layout, members))
    with db.prepared_cursor() as cursor:
        cursor.execute(RECORD_SQL if rated is None else RECORD_AND_RATE_SQL, params)
        match_id, duplicate_id = cursor.fetchone()
    return match_id, duplicate_id


def _rating_params(rated: RatedMatch, layout: Sequence[Sequence[int]], members: dict[int, LockedMember]) -> dict:
    columns: dict[str, list[object]] = {
        name: []
        for name in (
            "c_player",
            "c_rating_before",
            "c_rd_before",
            "c_volatility_before",
            "c_rd_as_of_before",
            "c_rd_at_event",
            "c_rating_after",
            "c_rd_after",
            "c_volatility_after",
            "c_rd_as_of_after",
            "c_expected",
            "c_score",
            "c_delta",
        )
    }
    for side_players, side_results in zip(layout, rated.result.sides, strict=True):
        for player, outcome in zip(side_players, side_results, strict=True):
            old, new = rated.standings[player], rated.after[player]
            for name, value in (
                ("c_player", player),
                ("c_rating_before", old.rating),
                ("c_rd_before", old.rd),
                ("c_volatility_before", old.volatility),
                ("c_rd_as_of_before", old.rd_as_of),
                ("c_rd_at_event", outcome.rd_at_game),
                ("c_rating_after", new.rating),
                ("c_rd_after", new.rd),
                ("c_volatility_after", new.volatility),
                ("c_rd_as_of_after", new.rd_as_of),
                ("c_expected", outcome.expected),
                ("c_score", outcome.score),
                ("c_delta", outcome.delta),
            ):
                columns[name].append(value)
    after = list(rated.after.items())
    columns["r_id"] = [members[player].id for player, _ in after]
    for field in ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at"):
        columns[f"r_{field}"] = [getattr(standing, field) for _, standing in after]
    return {
        **columns,
        "engine": str(rated.settings["engine"]),
        "engine_params": json.dumps(rated.settings),
    }
