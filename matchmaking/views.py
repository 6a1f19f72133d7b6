"""The queue panel: a "Find a match" button, then a partial that polls every 2 seconds.

HTMX requests get part of the panel: a join or a cancel gets its body
(``queue.html#queue-body``), a poll while the state holds (searching, or the same ready
check) only the status (``queue.html#queue-status`` or ``#ready-status``), so the button a
keyboard user is on is never replaced, and the section with the live region is never
swapped. Each status names its state in the poll's ``shown`` parameter. A full page load of the
same URL renders the same state inside the ladder page's layout. Polling ends when the
search ends: that poll gets the final body (retargeted there) with HTTP 286.

A panel that is neither searching nor in a ready check watches instead, every 3 seconds, while
its player is in a party (another member may start the party's search) or has a game still to
be played (its result or cancel ends it): the watch poll gets HTTP 204, no swap, until the
state it names changes, then the new body.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling, reswap, retarget

from accounts.http import AuthenticatedHttpRequest
from ladder.models import Ladder
from matchmaking import selectors, services
from matchmaking.forms import QueueJoinForm
from matchmaking.models import EntryStatus, QueueEntry


def _render(
    request: AuthenticatedHttpRequest, ladder: Ladder, entry: QueueEntry | None, *, poll: bool = False
) -> HttpResponse:
    now = timezone.now()
    context = selectors.panel_context(ladder, entry, now, player=request.user)
    if not request.htmx:
        context.update(selectors.party_context(ladder, request.user, now))
        return render(request, "matchmaking/queue.html", context)
    state, shown = str(context["shown"]), request.GET.get("shown", "")
    if poll and state and (shown == state or (not shown and state.startswith("w"))):  # the same state: its status
        partial = "queue-status" if state.startswith("w") else "ready-status"
        return render(request, f"matchmaking/queue.html#{partial}", context)
    response = render(request, "matchmaking/queue.html#queue-body", context)
    if entry is not None and entry.status != EntryStatus.WAITING:
        response.status_code = HttpResponseStopPolling.status_code
    if poll:  # the search ended: the whole body changes, not the status the poll came from
        reswap(retarget(response, "#queue-body"), "outerHTML")
    return response


@require_GET
@login_required
def queue_status(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The poll: keeps the search alive, pairs it or expires it, and shows where it stands."""
    ladder, entry = selectors.ladder_and_entry(slug=slug, player=request.user)
    if ladder is None:
        raise Http404("No ladder at this address.")
    entry = services.queue_poll_entry(ladder=ladder, entry=entry)
    shown = request.GET.get("shown", "")
    idle = entry is None or entry.status != EntryStatus.WAITING
    if shown.startswith("i") and idle and selectors.idle_state(entry) == shown:
        return HttpResponse(status=204)  # a watch poll, nothing changed: no swap, and no panel to build
    return _render(request, ladder, entry, poll=True)


@require_POST
@login_required
def queue_join(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    form = QueueJoinForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError([message for errors in form.errors.values() for message in errors])
        limit = form.cleaned_data["max_rating_gap"]
        wanted = form.formats_wanted()
        entry = services.queue_join(ladder=ladder, player=request.user, max_rating_gap=limit, formats_wanted=wanted)
        selectors.searching_forget(ladder)
    except ValidationError as exc:
        if request.htmx:
            current = services.current_entry(ladder=ladder, player=request.user)
            context = selectors.panel_context(ladder, current, timezone.now(), player=request.user)
            context["error"] = " ".join(exc.messages)
            game = next((e.params for e in exc.error_list if e.code == "in_game" and e.params), None)
            if game is not None:  # the page links the game rather than spelling out its address
                text = services.MEMBER_IN_GAME_TEXT if "username" in game else services.IN_GAME_TEXT
                context["error"], context["error_link"] = text % game, game["url"]
            choices = context.get("choices")
            if isinstance(choices, list) and request.POST.get("formats_shown"):  # as the player ticked them
                asked = request.POST.getlist("formats")
                context["choices"] = [selectors.Choice(c.kind, c.kind.code in asked) for c in choices]
            return render(request, "matchmaking/queue.html#queue-body", context)
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
        selectors.searching_forget(ladder)
    except ValidationError as exc:
        if not request.htmx:
            messages.error(request, " ".join(exc.messages))
        entry = services.current_entry(ladder=ladder, player=request.user)
    if request.htmx:
        return _render(request, ladder, entry)
    return redirect(ladder)
