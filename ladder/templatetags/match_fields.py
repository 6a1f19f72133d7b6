"""``{% match_field_inputs match %}``: the ladder's match fields in a queue match's result form.

The result form belongs to the queue's box (``templates/matchmaking/match_result_form.html``);
the fields are the ladder's, built here, or, after a refused result (``ladder.pages.views.match_result``),
the bound form with its errors next to the fields.
"""

from __future__ import annotations

from django import template
from django.template.context import Context
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from ladder.models import Match
from ladder.pages.field_forms import MatchFieldsForm, result_fields_form

register = template.Library()


@register.simple_tag(takes_context=True)
def match_field_inputs(context: Context, match: Match) -> SafeString:
    request = context["request"]
    form = getattr(request, "match_fields_form", None)
    if not isinstance(form, MatchFieldsForm):
        form = result_fields_form(match, request.user)
    if not form.has_fields:
        return SafeString("")
    return mark_safe(render_to_string("ladder/_match_fields.html", {"ff": form}, request))  # our template's output
