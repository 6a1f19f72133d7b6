"""Players' names as a sentence says them: ``{{ players|usernames }}`` is "ash and misty";
``{{ sides|claimers }}``, the players of the sides that claimed a no-show."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template

from ladder.matches.reads import names_of

register = template.Library()


@register.filter
def usernames(players: Iterable[Any]) -> str:
    """ "misty", "ash and misty", "ash, brock and misty" (users, by their usernames)."""
    return names_of([player.username for player in players])


@register.filter
def claimers(lines: Iterable[Any]) -> list[Any]:
    """The players of those ``lines`` (a side each, with ``side`` and ``players``) whose side claimed a no-show."""
    return [player for line in lines if line.side.no_show_claimed_at for player in line.players]


@register.filter
def cancel_askers(lines: Iterable[Any]) -> list[Any]:
    """The players of those ``lines`` whose side asked to cancel."""
    return [player for line in lines if line.side.cancel_requested_at for player in line.players]
