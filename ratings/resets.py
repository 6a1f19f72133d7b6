"""A season's soft reset: every rating of a ladder pulled towards a center, as one rating event.

Each rating row of the ladder whose player joined at or before the reset's instant ``at``
(members and players who left alike, so leaving never dodges a reset) becomes::

    rating' = r0 + f·(rating − r0)
    RD'     = max(RD(at), RD_reset)        RD(at): the stored RD grown to ``at`` by the engine
    rd_as_of' = at                         (or the row's own clock, if it is already later)

with volatility, games and results unchanged, and one history row of kind ``season`` per
player. The event takes its place in the rating log like a match or an adjustment, so a
replay applies it again at the same point (``ratings.replay``) with the same arithmetic
(``ratings.history.reset_standing``) and reproduces the live ratings.

On PostgreSQL the reset is two statements whatever the ladder's size: the rows are locked
in primary-key order (the order every rating update locks them in), then one statement
computes the new values once per row, writes them to the ratings (``UPDATE … FROM``) and
the history rows (``INSERT … SELECT``). Elsewhere the ORM twin does the same row by row
(``ratings.store`` holds both and chooses); the tests compare the two.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from ladder.models import Ladder
from ratings import store
from ratings.models import EventKind, PlayerRating, RatingEvent, RatingReset
from ratings.nightly import rd_at_sql


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
        rows = store.reset_lock(ladder, at)
        reset = RatingReset.objects.create(
            ladder=ladder, at=at, center=center, factor=factor, rd_reset=rd_reset, reason=reason, created_at=now
        )
        event = RatingEvent.objects.create(ladder=ladder, kind=EventKind.SEASON, reset=reset, at=at, created_at=now)
        store.reset_apply(ladder, reset, event, rows, now, rd_at=lambda: rd_at_sql(ladder, reset.at, "r"))
    return reset
