"""A season's soft reset: every rating of a ladder pulled towards a center, as one rating event.

Each rating row of the ladder whose player joined at or before the reset's instant ``at``
(members and players who left alike, so leaving never dodges a reset) becomes::

    rating' = r0 + f·(rating − r0)
    RD'     = max(RD(at), RD_reset)        RD(at): the stored RD grown to ``at`` by the engine
    rd_as_of' = at                         (or the row's own clock, if it is already later)

with volatility, games and results unchanged, and one history row of kind ``season`` per
player. The event takes its place in the rating log like a match or an adjustment, so a
replay applies it again at the same point (``ratings.replay``) with the same arithmetic
(``reset_standing``) and reproduces the live ratings.

On PostgreSQL the reset is two statements whatever the ladder's size: the rows are locked
in primary-key order (the order every rating update locks them in), then one statement
computes the new values once per row, writes them to the ratings (``UPDATE … FROM``) and
the history rows (``INSERT … SELECT``). Elsewhere the ORM twin does the same row by row; the
tests compare the two.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from core import db
from ladder.models import Ladder
from ratings.engines import Engine
from ratings.history import Standing, adjustment_change, change_values
from ratings.models import ChangeKind, EventKind, PlayerRating, RatingChange, RatingEvent, RatingReset
from ratings.nightly import rd_at_sql

_RATING = PlayerRating._meta.db_table
_CHANGE = RatingChange._meta.db_table


def reset_params(reset: RatingReset) -> dict[str, Any]:
    """What a reset's history rows record in ``engine_params``: its reason and numbers."""
    return {"reason": reset.reason, "center": reset.center, "factor": reset.factor, "rd_reset": reset.rd_reset}


def reset_standing(old: Standing, reset: RatingReset, engine: Engine) -> tuple[float, Standing]:
    """The RD at the reset's instant and the standing after it; live and replays both use this."""
    rd_at_event = engine.rd_at(old.state(), reset.at.timestamp())
    rd = rd_at_event if reset.rd_reset is None else max(rd_at_event, reset.rd_reset)
    new = dataclasses.replace(
        old,
        rating=reset.center + reset.factor * (old.rating - reset.center),
        rd=rd,
        rd_as_of=max(old.rd_as_of, reset.at),
    )
    return rd_at_event, new


def reset_players(reset: RatingReset) -> list[int]:
    """The players a reset applies to: every rating row of its ladder joined by its instant."""
    rows = PlayerRating.objects.filter(ladder_id=reset.ladder_id, joined_at__lte=reset.at).order_by("pk")
    return list(rows.values_list("player_id", flat=True))


def rating_reset_apply(
    *,
    ladder: Ladder,
    at: datetime,
    center: float,
    factor: float,
    rd_reset: float | None,
    reason: str,
    now: datetime | None = None,
) -> RatingReset:
    """Reset every rating of ``ladder`` at ``at`` (see the module docstring), in one transaction.

    Returns the reset; its event is ``reset.rating_event``. The rows are locked before the
    event is numbered, so a match rated meanwhile is ordered wholly before or after it.
    """
    if not 0.0 <= factor <= 1.0:
        raise ValueError(f"the reset factor must lie in [0, 1]; got {factor!r}")
    now = now or timezone.now()
    with transaction.atomic():
        rows: list[PlayerRating] = []
        if db.on_postgresql():
            _lock_sql(ladder, at)
        else:
            locked = PlayerRating.objects.select_for_update().filter(ladder=ladder, joined_at__lte=at)
            rows = list(locked.order_by("pk"))
        reset = RatingReset.objects.create(
            ladder=ladder, at=at, center=center, factor=factor, rd_reset=rd_reset, reason=reason, created_at=now
        )
        event = RatingEvent.objects.create(ladder=ladder, kind=EventKind.SEASON, reset=reset, at=at, created_at=now)
        if db.on_postgresql():
            _apply_sql(ladder, reset, event, now)
        else:
            _apply_orm(ladder, reset, event, rows, now)
    return reset


def _lock_sql(ladder: Ladder, at: datetime) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT id FROM {_RATING} WHERE ladder_id = %s AND joined_at <= %s"
            " ORDER BY id FOR NO KEY UPDATE) AS locked",
            [ladder.pk, at],
        )


def _apply_sql(ladder: Ladder, reset: RatingReset, event: RatingEvent, now: datetime) -> int:
    """One statement: the new values computed once per row, an ``UPDATE … FROM`` of the ratings
    and an ``INSERT … SELECT`` of the history rows from them.

    ``rd_at_sql`` is the engine's ``rd_at`` operation for operation, and the rating's
    arithmetic is ``reset_standing``'s, so both give the Python twin's floats. Every part of
    the statement reads the same snapshot, so the history rows keep the values before.
    """
    rd, params = rd_at_sql(ladder, reset.at, "r")
    floor = "NULL::float8" if reset.rd_reset is None else "%(rd_reset)s"
    statement = f"""
        WITH g AS MATERIALIZED (
            SELECT r.id, r.player_id, r.rating, r.rd, r.volatility, r.rd_as_of, m.rd_at,
                %(center)s + %(factor)s * (r.rating - %(center)s) AS new_rating
            FROM {_RATING} AS r
            CROSS JOIN LATERAL (SELECT {rd} AS rd_at) AS m
            WHERE r.ladder_id = %(ladder)s AND r.joined_at <= %(at_ts)s
        ), moved AS (
            UPDATE {_RATING} AS r
            SET rating = g.new_rating, rd = GREATEST(g.rd_at, {floor}), rd_as_of = GREATEST(g.rd_as_of, %(at_ts)s)
            FROM g
            WHERE r.id = g.id
        )
        INSERT INTO {_CHANGE} (event_id, ladder_id, player_id, match_id, kind, engine, engine_params, created_at,
            rating_before, rd_before, volatility_before, rd_as_of_before, rd_at_event,
            rating_after, rd_after, volatility_after, rd_as_of_after, expected, score, delta)
        SELECT %(event)s, %(ladder)s, g.player_id, NULL, %(kind)s, %(engine)s, %(engine_params)s::jsonb, %(now)s,
            g.rating, g.rd, g.volatility, g.rd_as_of, g.rd_at,
            g.new_rating, GREATEST(g.rd_at, {floor}), g.volatility, GREATEST(g.rd_as_of, %(at_ts)s), NULL, NULL,
            g.new_rating - g.rating
        FROM g
    """
    values = {
        **params,
        "event": event.pk,
        "ladder": ladder.pk,
        "kind": ChangeKind.SEASON.value,
        "engine": ladder.engine,
        "engine_params": json.dumps(reset_params(reset)),
        "now": now,
        "center": reset.center,
        "factor": reset.factor,
        "rd_reset": reset.rd_reset,
    }
    with connection.cursor() as cursor:
        cursor.execute(statement, values)
        return cursor.rowcount


def _apply_orm(ladder: Ladder, reset: RatingReset, event: RatingEvent, rows: list[PlayerRating], now: datetime) -> int:
    """The ORM twin of ``_apply_sql``: ``reset_standing`` row by row, then ``bulk_create`` and ``bulk_update``."""
    engine = ladder.get_engine()
    changes = []
    for row in rows:
        old = Standing.of(row)
        rd_at_event, new = reset_standing(old, reset, engine)
        changes.append(
            RatingChange(
                event=event,
                ladder_id=ladder.pk,
                kind=ChangeKind.SEASON,
                engine=ladder.engine,
                engine_params=reset_params(reset),
                created_at=now,
                **change_values(adjustment_change(row.player_id, old, new, rd_at_event)),
            )
        )
        row.rating, row.rd, row.rd_as_of = new.rating, new.rd, new.rd_as_of
    RatingChange.objects.bulk_create(changes, batch_size=2_000)
    PlayerRating.objects.bulk_update(rows, ["rating", "rd", "rd_as_of"], batch_size=500)
    return len(rows)
