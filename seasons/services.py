"""Closing seasons: archive, badges, the soft reset, the players told, the next season started.

``season_close`` does all of it in one transaction with the season row locked, so a
close that runs twice (a retry, two workers) does it once; the players are told after the
commit by a task (``season_notify``), a few thousand a transaction, so telling 100,000
players never holds the ladder's ratings locked. ``seasons_close_due`` closes
every season whose end has passed, oldest first, so a beat that missed days catches up in
order; the hourly task runs it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ladder.models import Ladder
from notifications.models import Kind
from notifications.services import notify
from ratings.models import RatingReset
from ratings.resets import rating_reset_apply
from seasons.models import (
    Badge,
    BadgeBasis,
    BadgeTier,
    ResetMode,
    Season,
    SeasonSettings,
    SeasonStanding,
    SeasonStatus,
)
from seasons.standings import StandingRow, final_standings
from seasons.store import standings_archive

NOTIFY_CHUNK = 5_000  # players told per transaction
SEASON_NOT_OVER = "%(season)s ends at %(end)s; it cannot close before then."


@dataclass(frozen=True, slots=True)
class CloseResult:
    season: Season
    closed: bool  # False: it was closed already, nothing changed
    standings: int = 0
    ranked: int = 0
    badges: int = 0
    reset: RatingReset | None = None
    started: Season | None = None


def season_close(*, season: Season, now: datetime | None = None) -> CloseResult:
    """Close ``season`` once (see the module docstring); closing a closed season changes nothing.

    Refused with a ``ValidationError`` before the season's end.
    """
    now = now or timezone.now()
    with transaction.atomic():
        season = Season.objects.select_for_update().select_related("ladder").get(pk=season.pk)
        if season.status == SeasonStatus.CLOSED:
            return CloseResult(season=season, closed=False)
        if season.ends_at > now:
            raise ValidationError(
                SEASON_NOT_OVER, code="not_over", params={"season": season.name, "end": season.ends_at.isoformat()}
            )
        rows = final_standings(season)
        standings_archive(rows)
        ranked = [row for row in rows if row.rank is not None]
        badges = _award_badges(season, rows)
        reset = _reset(season, now)
        season.status, season.closed_at, season.ranked_count, season.reset = (
            SeasonStatus.CLOSED,
            now,
            len(ranked),
            reset,
        )
        season.save(update_fields=["status", "closed_at", "ranked_count", "reset"])
        _tell_after_commit(season)
        started = season_start_next(ladder=season.ladder, now=now)
    return CloseResult(
        season=season,
        closed=True,
        standings=len(rows),
        ranked=len(ranked),
        badges=len(badges),
        reset=reset,
        started=started,
    )


def seasons_close_due(*, now: datetime | None = None) -> list[CloseResult]:
    """Close every season whose end has passed, oldest end first, and start the seasons now due."""
    now = now or timezone.now()
    results = []
    for season_id in (
        Season.objects.exclude(status=SeasonStatus.CLOSED)
        .filter(ends_at__lte=now)
        .order_by("ends_at", "pk")
        .values_list("pk", flat=True)
    ):
        results.append(season_close(season=Season(pk=season_id), now=now))
    for ladder_id in (
        Season.objects.filter(status=SeasonStatus.SCHEDULED, starts_at__lte=now)
        .values_list("ladder_id", flat=True)
        .distinct()
    ):
        with transaction.atomic():
            season_start_next(ladder=Ladder.objects.get(pk=ladder_id), now=now)
    return results


def season_start_next(*, ladder: Ladder, now: datetime) -> Season | None:
    """Start ``ladder``'s earliest scheduled season that has begun and not ended, if none is running."""
    if Season.objects.filter(ladder=ladder, status=SeasonStatus.RUNNING).exists():
        return None
    season = (
        Season.objects.select_for_update()
        .filter(ladder=ladder, status=SeasonStatus.SCHEDULED, starts_at__lte=now, ends_at__gt=now)
        .order_by("starts_at", "pk")
        .first()
    )
    if season is None:
        return None
    season.status = SeasonStatus.RUNNING
    season.save(update_fields=["status"])
    return season


def _award_badges(season: Season, rows: list[StandingRow]) -> dict[int, Badge]:
    """Each player's best tier (smallest ``top_n``; by final rank before peak on a tie): one badge each."""
    tiers = sorted(
        BadgeTier.objects.filter(ladder_id=season.ladder_id), key=lambda t: (t.top_n, t.basis != BadgeBasis.FINAL)
    )
    badges: dict[int, Badge] = {}
    if not tiers:
        return badges
    for row in rows:
        for tier in tiers:
            earned = row.rank if tier.basis == BadgeBasis.FINAL else row.peak_rank
            if earned is not None and earned <= tier.top_n:
                badges[row.player_id] = Badge(season=season, player_id=row.player_id, tier=tier, rank=earned)
                break
    Badge.objects.bulk_create(list(badges.values()), batch_size=2_000)
    return badges


def _reset(season: Season, now: datetime) -> RatingReset | None:
    ladder = season.ladder
    settings = SeasonSettings.objects.filter(ladder=ladder).first()
    if settings is None or settings.mode == ResetMode.NONE:
        return None
    center = ladder.initial_rating if settings.center is None else settings.center
    return rating_reset_apply(
        ladder=ladder,
        at=season.ends_at,
        center=center,
        factor=settings.factor,
        rd_reset=settings.rd_reset,
        reason=f"{season.name} ended",
        now=now,
    )


def season_notify(*, season_id: int, now: datetime | None = None) -> int:
    """Tell each player ranked in the closed season their final rank (and badge), once.

    Run by a task after the close commits, ``NOTIFY_CHUNK`` players a transaction: a
    notification is unique per recipient, kind and key, so a retry tells nobody twice.
    """
    now = now or timezone.now()
    season = Season.objects.select_related("ladder").get(pk=season_id)
    if not season.is_closed:
        return 0
    ranked = SeasonStanding.objects.filter(season=season, rank__isnull=False).order_by("rank")
    badges = dict(Badge.objects.filter(season=season).values_list("player_id", "tier__name"))
    data = {
        "season": season.name,
        "ladder": season.ladder.name,
        "ladder_slug": season.ladder.slug,
        "season_url": season.get_absolute_url(),
        "ranked": season.ranked_count,
    }
    told = 0
    rows = list(ranked.values_list("player_id", "rank"))
    for start in range(0, len(rows), NOTIFY_CHUNK):
        chunk = rows[start : start + NOTIFY_CHUNK]
        data_for: dict[int, dict[str, object]] = {}
        for player, rank in chunk:
            data_for[player] = {"rank": rank, **({"badge": badges[player]} if player in badges else {})}
        with transaction.atomic():
            told += notify(
                Kind.SEASON_ENDED,
                list(data_for),
                key=f"season:{season.pk}",
                ladder_id=season.ladder_id,
                data=data,
                data_for=data_for,
                now=now,
            )
    return told


def _tell_after_commit(season: Season) -> None:
    from seasons.tasks import season_notify_task

    transaction.on_commit(functools.partial(season_notify_task.delay, season.pk), robust=True)
