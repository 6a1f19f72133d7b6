"""Reads of seasons for pages, the API and template tags; each a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable

from django.core.cache import cache
from django.db import transaction

from ladder.models import Ladder
from seasons.models import Badge, Season, SeasonStanding, SeasonStatus

SEASONS_CACHE_SECONDS = 600


def ladder_seasons(ladder: Ladder) -> list[Season]:
    """The ladder's seasons, the latest start first (each knows its ladder: links cost no query).

    Kept in the cache (every save or delete of a season drops it, ``seasons.apps``) and read
    once per ``ladder`` object: the ladder page's season box and its leaderboard's badges
    both ask, and a ladder page reads seasons from the database once at most.
    """
    cached: list[Season] | None = getattr(ladder, "_season_list", None)
    if cached is None:
        key = seasons_cache_key(ladder.pk)
        cached = cache.get(key)
        if cached is None:
            cached = list(Season.objects.filter(ladder=ladder).order_by("-starts_at", "-pk"))
            cache.set(key, cached, SEASONS_CACHE_SECONDS)  # before the ladder is attached: not pickled with it
        for season in cached:
            season.ladder = ladder
        ladder._season_list = cached  # type: ignore[attr-defined]
    return cached


def seasons_cache_key(ladder_id: int) -> str:
    return f"seasons:ladder:{ladder_id}"


def seasons_forget(ladder_id: int) -> None:
    """Drop the cached season list of a ladder, now and again after the commit (a reader in
    between would have cached the list as it was before)."""
    key = seasons_cache_key(ladder_id)
    cache.delete(key)
    transaction.on_commit(lambda: cache.delete(key), robust=True)


def latest_closed(ladder: Ladder) -> Season | None:
    """The ladder's closed season that ended last (its badges show on the leaderboard)."""
    closed = [season for season in ladder_seasons(ladder) if season.status == SeasonStatus.CLOSED]
    return max(closed, key=lambda season: (season.ends_at, season.pk), default=None)


def badges_for(season: Season | None, players: Iterable[int]) -> dict[int, Badge]:
    """The badges ``players`` earned in ``season``, by player, in one query."""
    if season is None:
        return {}
    badges = Badge.objects.filter(season=season, player_id__in=list(players)).select_related("tier", "season")
    return {badge.player_id: badge for badge in badges}


def player_badges(player_id: int) -> list[Badge]:
    """Every badge of a player, the latest season first, with its season and ladder (one query)."""
    return list(
        Badge.objects.filter(player_id=player_id)
        .select_related("tier", "season", "season__ladder")
        .order_by("-season__ends_at", "pk")
    )


def player_seasons(ladder: Ladder, player_id: int) -> list[SeasonStanding]:
    """A player's archived standings in ``ladder``'s closed seasons, the latest first, each with its badge."""
    standings = list(
        SeasonStanding.objects.filter(season__ladder=ladder, player_id=player_id)
        .select_related("season")
        .order_by("-season__ends_at")
    )
    badges = {
        badge.season_id: badge
        for badge in Badge.objects.filter(season__ladder=ladder, player_id=player_id).select_related("tier")
    }
    for standing in standings:
        standing.season.ladder = ladder
        standing.badge = badges.get(standing.season_id)  # type: ignore[attr-defined]
    return standings
