"""Tournament points on the ladder's pages: ``{% load tournament_points %}`` in templates the ladder app owns.

The ladder app never imports tournaments (docs/architecture.md); its player page asks this tag.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import timezone

from ladder.models import Ladder
from tournaments.ranking import player_points

register = template.Library()


@register.inclusion_tag("tournaments/_profile_points.html")
def player_tournament_points(ladder: Ladder, player: Any) -> dict[str, Any]:
    """A player's tournament points in ``ladder`` and the finished tournaments they come from (nothing without any)."""
    return {"ladder": ladder, "player": player, "row": player_points(ladder, player, timezone.now())}
