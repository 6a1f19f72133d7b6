"""``{% head_to_head match %}`` and ``{% field_records ladder player %}``: the statistics on the ladder app's pages.

``ladder`` imports no app above it, so its match and player pages load these tags, and the
statistics' own reads (``stats.selectors``) fill them.
"""

from __future__ import annotations

from typing import Any

from django import template

from accounts.models import User
from ladder.models import Ladder
from stats import selectors
from stats.models import Record

register = template.Library()


@register.filter
def percent(value: float | None) -> str:
    """A rate as a whole percent ("54%"), or a dash when there is none."""
    return "—" if value is None else f"{100 * value:.0f}%"


@register.filter
def difference(record: Record) -> str:
    """Scored minus expected points, signed ("+12.5", "−3.0")."""
    value = record.score_sum - record.expected_sum
    return f"+{value:,.1f}" if value >= 0 else f"−{-value:,.1f}"


@register.inclusion_tag("stats/_head_to_head.html")
def head_to_head(summary: Any) -> dict[str, Any]:
    """The record against each other of a one-against-one match's two players (nothing for teams and
    free-for-alls). ``summary`` is the match page's ``ladder.matches.reads.MatchSummary``: its sides hold the
    players already, so the tag reads only the record's row."""
    sides = [[line.player for line in side.players] for side in summary.sides]
    if len(sides) != 2 or any(len(players) != 1 for players in sides):
        return {"record": None}
    return {"record": selectors.versus(summary.match.ladder, sides[0][0], sides[1][0])}


@register.inclusion_tag("stats/_field_records.html")
def field_records(ladder: Ladder, player: User) -> dict[str, Any]:
    """The player's record per value of each of the ladder's counted fields (a tribe, a map)."""
    return {"ladder": ladder, "player": player, "groups": selectors.player_records(ladder, player.pk)}
