"""Who is ranked, in which order, and the value on the ladder's scale: one rule (docs/rules.md §11),
in Python and in SQL side by side.

Every ranking goes through here: the live leaderboard and a player's rank
(``ladder.standings.leaderboard``), the API's pages, the nightly snapshot (``ladder.standings.nightly``)
and the preview of a change of settings (``ladder.standings.rating_settings``). PostgreSQL
ranks with the SQL twins, other databases (and PostgreSQL under ``core.db.orm_twins()``)
in Python. The two give the same order to the bit (``tests/ladder/test_ranking.py``), so a
rank change between a page and a snapshot compares like with like.

**Ranked** at an instant (the ladder's settings): a member whose RD then is at most
``provisional_rd`` (docs/rules.md §12), with at least ``ranked_min_games`` games and,
unless ``ranked_max_idle_days`` is 0, a game within that many days.

**Order**: the sort value on the ladder's scale, highest first, then rating, highest
first, then the rating row's id. GLIXARE and TR are the same increasing curve of ``x``
(``ratings.engines.gxe_x``, docs/rules.md §10), so both sort by ``x`` itself: the shown
GLIXARE is rounded to two decimals, and ranking by the rounded value would order two
players a hair apart by rating instead.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db import models
from django.db.models import Exists, OuterRef, Q

from accounts.models import User
from ladder.models import LeaderboardScale, PlayerMark, Suspension
from ratings.engines import CONSERVATIVE_K, GXE_C, GXE_MIDPOINT, GXE_RD_FACTOR, Display, conservative, gxe_x

if TYPE_CHECKING:
    from ladder.models import Ladder
    from ratings.models import PlayerRating


# Who is listed ---------------------------------------------------------------------------
#
# A member is listed (ranked or not, and counted among the members) unless their account is
# banned (``is_active`` off) or marked (docs/rules.md §15, "Marks"), or a suspension from the
# ladder is in force (docs/rules.md §18).


def listed_q(at: datetime) -> Q:
    """The listed members, as a filter of ``PlayerRating`` rows (the twin of ``listed_sql``)."""
    suspended = Suspension.objects.in_force(at).filter(ladder_id=OuterRef("ladder_id"), player_id=OuterRef("player_id"))
    marked = PlayerMark.objects.in_force_at(at).filter(player_id=OuterRef("player_id"))
    return Q(~Exists(suspended), ~Exists(marked), is_active=True, player__is_active=True)


def listed_sql(at: datetime, alias: str = "r") -> tuple[str, dict[str, Any]]:
    """``listed_q`` as SQL for row ``alias`` of the rating table, with its own ``listed_at`` parameter."""
    users, suspensions, marks = User._meta.db_table, Suspension._meta.db_table, PlayerMark._meta.db_table
    sql = (
        f"{alias}.is_active"
        f" AND EXISTS (SELECT 1 FROM {users} AS lu WHERE lu.id = {alias}.player_id AND lu.is_active)"
        f" AND NOT EXISTS (SELECT 1 FROM {suspensions} AS ls WHERE ls.ladder_id = {alias}.ladder_id"
        f" AND ls.player_id = {alias}.player_id AND ls.starts_at <= %(listed_at)s AND ls.lifted_at IS NULL"
        " AND (ls.ends_at IS NULL OR ls.ends_at > %(listed_at)s))"
        f" AND NOT EXISTS (SELECT 1 FROM {marks} AS lm WHERE lm.player_id = {alias}.player_id"
        " AND lm.created_at <= %(listed_at)s AND (lm.lifted_at IS NULL OR lm.lifted_at > %(listed_at)s))"
    )
    return sql, {"listed_at": at}


# Who is ranked ---------------------------------------------------------------------------


def unranked_reasons(*, ladder: Ladder, rating: PlayerRating, rd_now: float, now: datetime) -> tuple[str, ...]:
    """Why ``rating`` is not ranked in ``ladder`` at ``now``, in words; empty if it is.

    The three rules of the module docstring, each a ladder setting. The RD gets a decimal
    only when whole numbers would read "RD 100 > 100".
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


class UnrankedCode(models.TextChoices):
    """What each reason of ``unranked_reasons`` is, for a program (the API's ``unranked``)."""

    PROVISIONAL = "provisional", "RD above the ladder's provisional RD"
    TOO_FEW_GAMES = "too_few_games", "fewer games than the ladder's minimum"
    NO_GAME = "no_game", "no game played yet"
    IDLE = "idle", "no game within the ladder's idle days"
    LEFT = "left", "left the ladder"


def unranked_code(reason: str) -> UnrankedCode:
    """The code of a reason ``unranked_reasons`` (or a page's "left the ladder") words."""
    if reason.startswith("RD "):
        return UnrankedCode.PROVISIONAL
    if reason.endswith(" games"):
        return UnrankedCode.TOO_FEW_GAMES
    if reason == "no game yet":
        return UnrankedCode.NO_GAME
    if reason.startswith("last game "):
        return UnrankedCode.IDLE
    if reason == "left the ladder":
        return UnrankedCode.LEFT
    raise ValueError(f"reason must be one unranked_reasons words, got {reason!r}")


def ranked_sql(ladder: Ladder, at: datetime, rd: str, alias: str = "r") -> tuple[str, dict[str, Any]]:
    """``unranked_reasons`` is empty, as SQL, for an active row ``alias`` of the rating table.

    ``rd`` is an SQL expression for the RD at ``at``. A member who never played is not
    ranked while the activity rule is on (``last_played_at`` is ``NULL``, so the condition
    is ``NULL``: test it with ``IS TRUE``).
    """
    conditions = [f"{alias}.is_active", f"({rd}) <= %(provisional_rd)s", f"{alias}.games >= %(min_games)s"]
    params: dict[str, Any] = {"provisional_rd": ladder.provisional_rd, "min_games": ladder.ranked_min_games}
    if ladder.ranked_max_idle_days:
        conditions.append(f"{alias}.last_played_at >= %(active_since)s")
        params["active_since"] = at - timedelta(days=ladder.ranked_max_idle_days)
    return " AND ".join(conditions), params


def provisional_sql(rd: str) -> str:
    """``ratings.engines.is_provisional`` as SQL, with ``ranked_sql``'s ``provisional_rd`` parameter."""
    return f"({rd}) > %(provisional_rd)s"


# In which order --------------------------------------------------------------------------


def sort_value(scale: str, rating: float, rd: float) -> float:
    """The value a leaderboard on ``scale`` sorts by, highest first."""
    if scale == LeaderboardScale.CONSERVATIVE:
        return conservative(rating, rd)
    return gxe_x(rating, rd)


def rank_key(scale: str, rating: float, rd: float, rating_id: int) -> tuple[float, float, int]:
    """Sort key of a ranked player: ``sorted(..., key=rank_key)`` gives rank 1 first."""
    return (-sort_value(scale, rating, rd), -rating, rating_id)


def sort_value_sql(scale: str, rd: str, alias: str = "r") -> tuple[str, dict[str, float]]:
    """``sort_value`` as SQL, with ``rd`` an SQL expression for the RD at the instant.

    The engines' constants go in as bound floats (or their exact ``repr``), and the
    operations are ``gxe_x``'s in the same order, so PostgreSQL computes the very same float.
    """
    if scale == LeaderboardScale.CONSERVATIVE:
        return f"({alias}.rating - {CONSERVATIVE_K!r} * ({rd}))", {}
    return (
        f"(({alias}.rating - {GXE_MIDPOINT!r}) * %(pi)s / sqrt(%(k3)s * ({rd}) * ({rd}) + %(gxe_c)s))",
        {"pi": math.pi, "k3": GXE_RD_FACTOR, "gxe_c": GXE_C},
    )


def rank_order_sql(value: str, alias: str) -> str:
    """``rank_key``'s order as an SQL ``ORDER BY`` list, ``value`` being ``sort_value_sql``'s for row ``alias``."""
    return f"{value} DESC, {alias}.rating DESC, {alias}.id"


# The value on the ladder's scale ---------------------------------------------------------


def scale_value(scale: str, shown: Display) -> float:
    """The value a leaderboard on ``scale`` shows for a rating: its GLIXARE (rounded), TR or conservative."""
    if scale == LeaderboardScale.TR:
        return shown.tr
    if scale == LeaderboardScale.CONSERVATIVE:
        return shown.conservative
    return shown.gxe
