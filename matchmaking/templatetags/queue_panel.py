"""``{% queue_panel ladder membership %}`` and ``{% match_lifecycle match %}``: the queue's parts of
the ladder app's pages.

The ladder page shows the panel without the ladder app knowing the queue: the page loads
this tag, and the queue's own reads (``matchmaking.selectors.panel_context``) fill it.
"""

from __future__ import annotations

from django import template
from django.template.context import Context
from django.utils import timezone
from django.utils.safestring import SafeString

from ladder.models import OPEN_STATUSES, Ladder, Match, MatchStatus
from matchmaking import lifecycle, selectors, services

register = template.Library()

PANEL = "matchmaking/queue.html#queue-panel"


@register.simple_tag(takes_context=True)
def queue_panel(context: Context, ladder: Ladder, membership: object | None) -> SafeString:
    """The panel for the page's viewer: their current search if they are a member, else the invitation;
    and for a member, where the queue has team formats, their party."""
    request = context["request"]
    entry = services.current_entry(ladder=ladder, player=request.user) if membership else None
    if context.template is None:  # set whenever a template renders this tag
        raise template.TemplateSyntaxError("{% queue_panel %} renders inside a template only.")
    panel = context.template.engine.get_template(PANEL)
    now = timezone.now()
    shown = selectors.panel_context(ladder, entry, now, player=request.user if membership else None)
    if membership:
        shown.update(selectors.party_context(ladder, request.user, now))
    with context.push(shown):
        return panel.render(context)


LIFECYCLE = "matchmaking/match_lifecycle.html"
SERIES = "matchmaking/match_series_card.html"


@register.simple_tag(takes_context=True)
def match_lifecycle(context: Context, match: Match) -> SafeString:
    """``{% match_lifecycle match %}``: a paired match's ready check, play window, no-show claim or
    cancellation on its page, for the page's viewer; nothing for a match the queue did not pair."""
    if not match.paired_by_queue:
        return SafeString("")
    if context.template is None:
        raise template.TemplateSyntaxError("{% match_lifecycle %} renders inside a template only.")
    box_name = LIFECYCLE
    if match.status not in OPEN_STATUSES and match.status != MatchStatus.CANCELLED:
        if match.ladder.best_of <= 1:
            return SafeString("")
        box_name = SERIES  # a decided series, awaiting confirmation or rated: its games stay in view
    now = timezone.now()
    match = lifecycle.settle(match, now=now)
    box = context.template.engine.get_template(box_name)
    with context.push(selectors.lifecycle_context(match, context["request"].user, now)):
        return box.render(context)
