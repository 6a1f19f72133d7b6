"""A paired match's buttons: Ready, agree to cancel, claim a no-show and answer one.

Each is a plain form post that goes back to the match page with a message, and works
without JavaScript. From htmx they answer with the part of the page the button sits in:
the queue panel's body (``from=queue``) or the match page's lifecycle box, so keyboard
focus stays on the button's id. The box's poll (``match_lifecycle``) settles a deadline
that has passed before it draws.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from ladder.models import Match, MatchStatus
from matchmaking import lifecycle, selectors, services

READY = "You are ready. The match starts once your opponent is ready too."
BOTH_READY = "Both ready: play your game, then report the result here."
CANCEL_ASKED = "You asked to cancel. It is cancelled once your opponent agrees."
CANCELLED = "The match is cancelled. It is not rated."
CLAIMED = "Claim sent. Your opponent has until the deadline to answer; unanswered, you win by forfeit."
CONTESTED = "Your answer is sent to the moderators, who will decide."
CONCEDED = "You conceded: your opponent wins by forfeit."


def _box(request: AuthenticatedHttpRequest, match: Match, *, notice: str = "", error: str = "") -> HttpResponse:
    context = selectors.lifecycle_context(match, request.user, timezone.now())
    response = render(request, "matchmaking/match_lifecycle.html", {**context, "notice": notice, "error": error})
    if request.method == "GET" and match.status != MatchStatus.READY_CHECK:
        response.status_code = HttpResponseStopPolling.status_code  # only a ready check changes by itself
    return response


def _queue_body(request: AuthenticatedHttpRequest, match: Match, *, error: str = "") -> HttpResponse:
    entry = services.current_entry(ladder=match.ladder, player=request.user)
    if entry is not None:
        entry.ladder = match.ladder
    context = {**selectors.panel_context(match.ladder, entry, timezone.now()), "error": error}
    return render(request, "matchmaking/queue.html#queue-body", context)


def _act(
    request: AuthenticatedHttpRequest, pk: int, action: Callable[[Match, User], Match], notice: Callable[[Match], str]
) -> HttpResponse:
    match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
    error = said = ""
    try:
        match = action(match, request.user)
        said = notice(match)
    except ValidationError as exc:
        error = " ".join(exc.messages)
    if request.htmx and request.POST.get("from") == "queue":
        return _queue_body(request, match, error=error)
    if request.htmx:
        return _box(request, match, notice=said, error=error)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, said)
    return redirect(match)


@require_POST
@login_required
def ready(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _act(
        request,
        pk,
        lambda match, user: lifecycle.ready(match=match, user=user),
        lambda match: BOTH_READY if match.status == MatchStatus.SCHEDULED else READY,
    )


@require_POST
@login_required
def cancel(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _act(
        request,
        pk,
        lambda match, user: lifecycle.request_cancel(match=match, user=user),
        lambda match: CANCELLED if match.status == MatchStatus.CANCELLED else CANCEL_ASKED,
    )


@require_POST
@login_required
def no_show(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    return _act(request, pk, lambda match, user: lifecycle.claim_no_show(match=match, user=user), lambda _: CLAIMED)


@require_POST
@login_required
def no_show_answer(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    played = request.POST.get("played") == "yes"
    reason = request.POST.get("reason", "")
    return _act(
        request,
        pk,
        lambda match, user: lifecycle.answer_no_show(match=match, user=user, played=played, reason=reason),
        lambda _: CONTESTED if played else CONCEDED,
    )


@require_GET
@login_required
def match_lifecycle(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The lifecycle box, polled during a ready check: settles a passed deadline, then draws."""
    match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
    match = lifecycle.settle(match)
    return _box(request, match)
