"""``{% queue_panel ladder membership %}``: the matchmaking panel inside another app's page.

The ladder page shows the panel without the ladder app knowing the queue: the page loads
this tag, and the queue's own reads (``matchmaking.selectors.panel_context``) fill it.
"""

from __future__ import annotations

from django import template
from django.template.context import Context
from django.utils import timezone
from django.utils.safestring import SafeString

from ladder.models import Ladder
from matchmaking import selectors, services

register = template.Library()

PANEL = "matchmaking/queue.html#queue-panel"


@register.simple_tag(takes_context=True)
def queue_panel(context: Context, ladder: Ladder, membership: object | None) -> SafeString:
    """The panel for the page's viewer: their current search if they are a member, else the invitation."""
    request = context["request"]
    entry = services.current_entry(ladder=ladder, player=request.user) if membership else None
    if context.template is None:  # set whenever a template renders this tag
        raise template.TemplateSyntaxError("{% queue_panel %} renders inside a template only.")
    panel = context.template.engine.get_template(PANEL)
    with context.push(selectors.panel_context(ladder, entry, timezone.now())):
        return panel.render(context)
