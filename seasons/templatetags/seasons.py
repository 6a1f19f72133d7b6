"""Seasons on the ladder's pages: ``{% load seasons %}`` in templates the ladder app owns.

The ladder app never imports seasons (docs/architecture.md); its templates ask these tags.
Each tag costs a fixed number of queries, whatever the rows shown: badges are loaded for
all of a page's players at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template
from django.utils.html import format_html

from ladder.models import Ladder
from seasons.models import Badge, SeasonStatus
from seasons.selectors import badges_for, ladder_seasons, latest_closed, player_badges, player_seasons

register = template.Library()


@register.inclusion_tag("seasons/_selector.html")
def season_selector(ladder: Ladder) -> dict[str, Any]:
    """The ladder page's seasons box: the running season and links to every season's standings."""
    seasons = ladder_seasons(ladder)
    current = next((season for season in seasons if season.status == SeasonStatus.RUNNING), None)
    return {"ladder": ladder, "seasons": seasons, "current": current}


@register.inclusion_tag("seasons/_player_seasons.html")
def player_season_list(ladder: Ladder, player: Any) -> dict[str, Any]:
    """A player's closed seasons in ``ladder``: rank, rating, badge."""
    return {"ladder": ladder, "player": player, "standings": player_seasons(ladder, player.pk)}


@register.inclusion_tag("seasons/_profile_badges.html")
def profile_badges(player: Any) -> dict[str, Any]:
    return {"player": player, "badges": player_badges(player.pk)}


@register.simple_tag
def season_badges(ladder: Ladder, *row_lists: Iterable[Any]) -> dict[int, Badge]:
    """Badges of the latest closed season for the leaderboard rows shown (rows with ``rating.player_id``)."""
    players = [row.rating.player_id for rows in row_lists if rows for row in rows]
    if not players:
        return {}
    return badges_for(latest_closed(ladder), players)


@register.filter
def badge_of(badges: dict[int, Badge], player_id: int) -> str:
    """A player's badge as a small label, or nothing."""
    badge = badges.get(player_id) if badges else None
    if badge is None:
        return ""
    return format_html(
        ' <span class="badge accent" title="{} in {}: {} #{}">★ {}</span>',
        badge.tier.name,
        badge.season.name,
        "peak rank" if badge.tier.basis == "peak" else "final rank",
        badge.rank,
        badge.tier.name,
    )
