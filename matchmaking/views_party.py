"""The party box's actions: invite, answer, leave, withdraw (docs/rules.md §13, "Parties").

Each posts, calls one service of ``matchmaking.parties`` and answers htmx with the box again
(``party.html#party-box``, its refusal inline) and the queue's body out of band, since the
formats the join form offers depend on the party's size. A plain form post gets a message
and goes back to the ladder page, where the box is. The box watches for what others do (an
invitation arriving, one accepted or declined, a member leaving) with a poll every 5 seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from accounts.http import AuthenticatedHttpRequest
from ladder.models import Ladder
from matchmaking import parties, selectors, services
from matchmaking.forms import PartyInviteForm
from matchmaking.models import Party

INVITED = "%(username)s is invited: they have %(minutes)d minutes to accept."
ACCEPTED = "You joined %(leader)s's party."
DECLINED = "You declined %(leader)s's invitation."
LEFT = "You left the party."
ENDED = "You ended the party: everyone in it searches alone again."
WITHDRAWN = "The invitation to %(username)s is withdrawn."


def _answer(
    request: AuthenticatedHttpRequest, ladder: Ladder, act: Callable[[], str], *, typed: str = ""
) -> HttpResponse:
    """Run ``act`` (a service call returning the notice) and show the box with its notice or refusal."""
    try:
        notice, error = act(), ""
    except ValidationError as exc:
        notice, error = "", " ".join(exc.messages)
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, notice)
        return redirect(ladder)
    now = timezone.now()
    context = {
        **selectors.party_context(ladder, request.user, now),
        "ladder": ladder,
        "party_notice": notice,
        "party_error": error,
        "typed_username": typed if error else "",
    }
    return _box(request, ladder, context, now)


@require_GET
@login_required
def party_status(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The party box's watch poll: HTTP 204 while the box would show what ``seen`` names, else the
    box again, with the queue's body out of band (a member who joined or left changes its formats)."""
    ladder = get_object_or_404(Ladder, slug=slug)
    now = timezone.now()
    context = selectors.party_context(ladder, request.user, now)
    if not context:
        return HttpResponse(status=HttpResponseStopPolling.status_code)  # no parties here (any more)
    if context["party_seen"] == request.GET.get("seen"):
        return HttpResponse(status=204)
    return _box(request, ladder, {**context, "ladder": ladder}, now)


def _box(request: AuthenticatedHttpRequest, ladder: Ladder, context: dict[str, object], now: datetime) -> HttpResponse:
    response = render(request, "matchmaking/party.html#party-box", context)
    entry = services.current_entry(ladder=ladder, player=request.user)
    body = {**selectors.panel_context(ladder, entry, now, player=request.user), "oob": True}
    response.content += render_to_string("matchmaking/queue.html#queue-body", body, request=request).encode()
    return response


@require_POST
@login_required
def party_invite(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    form = PartyInviteForm(request.POST)
    typed = request.POST.get("username", "")[:150]

    def act() -> str:
        if not form.is_valid():
            raise ValidationError([message for errors in form.errors.values() for message in errors])
        place = parties.party_invite(ladder=ladder, leader=request.user, username=form.cleaned_data["username"])
        minutes = int(parties.PARTY_INVITE_TTL.total_seconds() // 60)
        return INVITED % {"username": place.player.username, "minutes": minutes}

    return _answer(request, ladder, act, typed=typed)


@require_POST
@login_required
def party_answer(request: AuthenticatedHttpRequest, slug: str, party: int) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    found = get_object_or_404(Party.objects.select_related("leader"), pk=party, ladder=ladder)
    accept = request.POST.get("answer") == "accept"

    def act() -> str:
        parties.party_answer(party=found, player=request.user, accept=accept)
        return (ACCEPTED if accept else DECLINED) % {"leader": found.leader.username}

    return _answer(request, ladder, act)


@require_POST
@login_required
def party_leave(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)

    def act() -> str:
        party = parties.party_leave(ladder=ladder, player=request.user)
        selectors.searching_forget(ladder)  # its search, if any, ended with it
        return ENDED if party.leader_id == request.user.pk else LEFT

    return _answer(request, ladder, act)


@require_POST
@login_required
def party_withdraw(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    username = request.POST.get("username", "")[:150]

    def act() -> str:
        party = parties.current_party(ladder=ladder, player=request.user)
        if party is None:
            raise ValidationError(parties.NOT_IN_PARTY % {"ladder": ladder.name}, code="not_in_party")
        parties.party_withdraw(party=party, leader=request.user, username=username)
        return WITHDRAWN % {"username": username}

    return _answer(request, ladder, act)
