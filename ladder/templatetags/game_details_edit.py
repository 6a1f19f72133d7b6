"""``{% details_edit_form as details_form %}``: the Moderator box's "Edit game details" form.

Built here for the box (``templates/ladder/_details_edit.html``, shown to moderators only),
unless a refused post (``ladder.pages.fields_edit``) put the bound form with its errors in
the context. A cancelled match, or a ladder with no match fields, has none.
"""

from __future__ import annotations

from typing import Any

from django import template

from ladder.models import MatchStatus
from ladder.pages.field_forms import DetailsEditForm

register = template.Library()


@register.simple_tag(takes_context=True)
def details_edit_form(context: template.Context) -> DetailsEditForm | None:
    refused = context.get("details_form")
    if isinstance(refused, DetailsEditForm):
        return refused
    summary: Any = context.get("summary")
    if summary is None or summary.match.status == MatchStatus.CANCELLED:
        return None
    form = DetailsEditForm(match=summary.match)
    return form if form.has_fields else None
