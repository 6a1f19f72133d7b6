"""A moderator's "Edit game details" form in the match page's Moderator box (issue 18).

The form is the report's (``ladder.pages.field_forms``), one input per player for per-player
fields, prefilled with the match's values, plus the reason; the checks are the service's
(``ladder.matches.field_corrections``), whose errors go back next to their inputs on the match
page (400). Anyone but a moderator gets 403, as for the box's other forms.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from accounts.roles import is_moderator
from ladder.matches.field_corrections import match_fields_correct
from ladder.models import Match
from ladder.pages.field_forms import DetailsEditForm
from ladder.pages.moderation import _match_page

NOT_A_MODERATOR = "Only moderators may correct a match's game details."
CHANGED = "Game details corrected. The change and its reason are in the match's moderator note."


@require_POST
@login_required
def match_fields_edit(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    if not is_moderator(request.user):
        raise PermissionDenied(NOT_A_MODERATOR)
    match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
    form = DetailsEditForm(request.POST, match=match)
    if form.is_valid():
        try:
            match_fields_correct(
                match=match, moderator=request.user, answers=form.answers(), reason=form.cleaned_data["reason"]
            )
        except ValidationError as exc:
            form.show_refusal(exc)
        else:
            messages.success(request, CHANGED)
            return redirect(match)
    return _match_page(request, pk, {"details_form": form})
