"""Deadlines other apps own, settled before a ladder page shows a match.

``ladder`` imports no app above it (docs/architecture.md), yet a queue match's ready check or
play window may have run out since anyone looked. The app that owns those deadlines
registers a settler here when it starts (``matchmaking.apps``); the match page calls
``settle_match`` first, so its header and its details show the same state.
"""

from __future__ import annotations

from collections.abc import Callable

from ladder.models import Match

Settler = Callable[[Match], Match]
_settlers: list[Settler] = []


def register_settler(settler: Settler) -> None:
    if settler not in _settlers:
        _settlers.append(settler)


def settle_match(match: Match) -> bool:
    """Run every registered settler on ``match`` (updated in place); whether its status changed."""
    before = match.status
    for settler in _settlers:
        settler(match)
    return match.status != before
