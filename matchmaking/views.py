"""The queue panel: a "Find a match" button, then a partial that polls every 2 seconds.

HTMX requests get the panel alone (``queue.html#queue-panel``); a full page load of the
same URL renders the same state inside the ladder page's layout. Polling ends when the
search ends: the final panel has no trigger and comes with HTTP 286.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from accounts.http import AuthenticatedHttpRequest
from core.http import HtmxHttpRequest
from ladder.models import Ladder
from matchmaking import selectors, services
from matchmaking.forms import QueueJoinForm
from matchmaking.models import EntryStatus, QueueEntry


def _render(request: HtmxHttpRequest, ladder: Ladder, entry: QueueEntry | None) -> HttpResponse:
    context = selectors.panel_context(ladder, entry, timezone.now())
    if request.htmx:
        response = render(request, "matchmaking/queue.html#queue-panel", context)
        if entry is not None and entry.status != EntryStatus.WAITING:
            response.status_code = HttpResponseStopPolling.status_code
        return response
    return render(request, "matchmaking/queue.html", context)


@require_GET
@login_required
def queue_status(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The poll: keeps the search alive, pairs it or expires it, and shows where it stands."""
    ladder, entry = selectors.ladder_and_entry(slug=slug, player=request.user)
    if ladder is None:
        raise Http404("No ladder at this address.")
    entry = services.queue_poll_entry(ladder=ladder, entry=entry)
    return _render(request, ladder, entry)


@require_POST
@login_required
def queue_join(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    form = QueueJoinForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError([message for errors in form.errors.values() for message in errors])
        limit = form.cleaned_data["max_rating_gap"]
        entry = services.queue_join(ladder=ladder, player=request.user, max_rating_gap=limit)
    except ValidationError as exc:
        if request.htmx:
            current = services.current_entry(ladder=ladder, player=request.user)
            context = {**selectors.panel_context(ladder, current, timezone.now()), "error": " ".join(exc.messages)}
            return render(request, "matchmaking/queue.html#queue-panel", context)
        messages.error(request, " ".join(exc.messages))
        return redirect(ladder)
    if request.htmx:
        return _render(request, ladder, entry)
    return redirect("matchmaking:status", slug=ladder.slug)


@require_POST
@login_required
def queue_leave(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        entry = services.queue_leave(ladder=ladder, player=request.user)
    except ValidationError as exc:
        if not request.htmx:
            messages.error(request, " ".join(exc.messages))
        entry = services.current_entry(ladder=ladder, player=request.user)
    if request.htmx:
        return _render(request, ladder, entry)
    return redirect(ladder)
