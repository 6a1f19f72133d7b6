"""``{% player_ratings player as rows %}``: a player's ladders and ratings on their profile.

The profile page is the accounts app's, and accounts knows no other app: the page loads
this tag, and the ratings app reads the rows.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import timezone

from accounts.models import User
from ratings.models import PlayerRating

register = template.Library()


@register.simple_tag
def player_ratings(player: User) -> list[dict[str, Any]]:
    """One row per ladder the player is a member of, by ladder name: the rating, RD now and display values."""
    now = timezone.now()
    memberships = PlayerRating.objects.members().filter(player=player).select_related("ladder").order_by("ladder__name")
    return [
        {"rating": membership, "rd_now": membership.rd_at(now), "shown": membership.display_at(now)}
        for membership in memberships
    ]
