"""``played(match, now)``: a paired match played out as its players would, so they may search again.

docs/rules.md §13, one game at a time: a player searches a ladder again once their game in it
has a result. Every player presses Ready (where the ladder has a ready check), then one of them
reports the first side the winner; the result awaits confirmation, which holds nobody.
"""

from __future__ import annotations

from datetime import datetime

from ladder.matches.reporting import match_report_result
from ladder.models import Match, MatchSide, MatchStatus, Participant
from matchmaking import lifecycle


def played(match: Match, now: datetime) -> Match:
    match.refresh_from_db()
    players = list(Participant.objects.filter(match=match).select_related("player").order_by("pk"))
    if match.status == MatchStatus.READY_CHECK:
        for participant in players:
            lifecycle.ready(match=match, user=participant.player, now=now)
        match.refresh_from_db()
    sides = MatchSide.objects.filter(match=match).count()
    placements = [1, *([2] * (sides - 1))] if sides == 2 else list(range(1, sides + 1))
    return match_report_result(match=match, reporter=players[0].player, placements=placements, now=now)
