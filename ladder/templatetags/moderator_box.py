"""``{% moderator_box as box %}``: what the match page's Moderator box offers, for moderators only.

The match page's view knows nothing of moderation; the box builds its own forms here,
unless a refused post (``ladder.pages.moderation``) put bound ones with errors in the context.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import template

from accounts.roles import is_moderator
from ladder.models import MatchStatus
from ladder.pages.moderation_forms import CorrectionForm, ReasonForm

register = template.Library()

# A moderator confirms a result as reported only while it waits for an answer.
CONFIRMABLE = (MatchStatus.PENDING, MatchStatus.DISPUTED)
# A result to correct exists once the match was played and reported.
CORRECTABLE = (MatchStatus.PENDING, MatchStatus.DISPUTED, MatchStatus.CONFIRMED, MatchStatus.CLAIMED)


@dataclass(frozen=True, slots=True)
class ModeratorBox:
    can_confirm: bool
    can_void: bool
    can_correct: bool
    confirm_form: ReasonForm
    void_form: ReasonForm
    correct_form: CorrectionForm


@register.simple_tag(takes_context=True)
def moderator_box(context: template.Context) -> ModeratorBox | None:
    request = context.get("request")
    summary: Any = context.get("summary")
    # Moderators are staff: a player's page asks nothing more of the database (no permission lookup).
    if request is None or summary is None or not request.user.is_staff or not is_moderator(request.user):
        return None
    match = summary.match
    sides = [line.side for line in summary.sides]  # prefetched with their players
    refused_void, refused_correct = context.get("void_form"), context.get("correct_form")
    refused_confirm = context.get("confirm_form")
    # A refused decision keeps its form on the page, with the error, whatever the match's state now.
    return ModeratorBox(
        can_confirm=match.status in CONFIRMABLE or refused_confirm is not None,
        can_void=match.status not in (MatchStatus.VOID, MatchStatus.CANCELLED) or refused_void is not None,
        can_correct=match.status in CORRECTABLE or refused_correct is not None,
        confirm_form=refused_confirm or ReasonForm(prefix="confirm"),
        void_form=refused_void or ReasonForm(prefix="void"),
        correct_form=refused_correct or CorrectionForm(prefix="correct", sides=sides),
    )
