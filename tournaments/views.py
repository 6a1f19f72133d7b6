"""Tournament pages: a ladder's list, a tournament's page (with its live part for htmx) and the forms' posts.

Each post calls one service of ``tournaments.services`` and goes back to the tournament's
page with a message: the refusal (a ValidationError's own words) or what was done. The
live part (the rounds, the standings and the bracket) is fetched again every 10 seconds
while the tournament runs; each read also advances it (``tournament_advance``), so a round
is paired as soon as its last game is decided even between two runs of the sweep.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from accounts.roles import is_moderator
from ladder.models import Ladder
from tournaments import reads, services
from tournaments.models import Board, Entry, Round, Status, Tournament

REGISTERED = "You are entered in %(name)s."
CHECKED_IN = "You are checked in: your entry plays when %(name)s starts."
WITHDRAWN = "Your entry is withdrawn from %(name)s."
BYE_ASKED = "Your entry sits out round %(round)d with a bye worth a draw."
BYE_CANCELLED = "Your bye is cancelled: your entry plays every round."
UNKNOWN_PLAYER = "There is no player named %(name)s."
DONE = {
    "start": "The tournament has started: round 1 is paired.",
    "pause": "The tournament is paused: no round is paired until it resumes.",
    "resume": "The tournament runs again.",
    "cancel": "The tournament is cancelled.",
    "repair": "The round is paired again.",
    "decide": "The game is decided.",
    "withdraw": "The entry is withdrawn.",
    "bye": "The entry has its bye.",
    "cancel_bye": "The entry's bye is cancelled: it plays that round.",
}
UNKNOWN_ACTION = "Unknown organiser action."


def _tournament(slug: str, tournament: str) -> Tournament:
    return get_object_or_404(Tournament.objects.select_related("ladder"), ladder__slug=slug, slug=tournament)


@require_GET
def tournament_list(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    groups = reads.ladder_tournaments(list(Tournament.objects.filter(ladder=ladder)))
    return render(request, "tournaments/list.html", {"ladder": ladder, "groups": groups})


def _context(request: HttpRequest, tournament: Tournament) -> dict[str, object]:
    now = timezone.now()
    if tournament.status == Status.RUNNING:
        tournament = services.tournament_advance(tournament=tournament, now=now)
    user = request.user if request.user.is_authenticated else None
    page = reads.page(tournament, user, now, shown=_number(request.GET.get("round")) or None)
    return {
        "ladder": tournament.ladder,
        "tournament": tournament,
        "page": page,
        "organiser": bool(user and is_moderator(user)),
        "check_in_opens_at": services.check_in_opens_at(tournament),
        "round_time": _duration(tournament.round_minutes),
        "now": now,
    }


@require_GET
def tournament_detail(request: HttpRequest, slug: str, tournament: str) -> HttpResponse:
    return render(request, "tournaments/detail.html", _context(request, _tournament(slug, tournament)))


@require_GET
def tournament_live(request: HttpRequest, slug: str, tournament: str) -> HttpResponse:
    return render(request, "tournaments/_live.html", _context(request, _tournament(slug, tournament)))


def _done(request: HttpRequest, tournament: Tournament, act: Callable[[], object], notice: str) -> HttpResponse:
    try:
        act()
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, notice)
    return redirect(tournament)


def _done_by_entry(
    request: AuthenticatedHttpRequest, tournament: Tournament, act: Callable[[Entry], object], notice: str
) -> HttpResponse:
    """``_done`` for an action of the signed-in player's own entry; none is refused on the page."""
    entry = services.entry_of(tournament, request.user)
    if entry is None:
        messages.error(request, services.NOT_YOURS)
        return redirect(tournament)
    return _done(request, tournament, lambda: act(entry), notice)


@login_required
@require_POST
def register(request: AuthenticatedHttpRequest, slug: str, tournament: str) -> HttpResponse:
    found = _tournament(slug, tournament)
    names = [n.strip() for n in request.POST.get("teammates", "").replace(",", " ").split() if n.strip()]
    teammates = []
    for name in names:
        teammate = User.objects.filter(username__iexact=name, is_active=True).first()
        if teammate is None:
            messages.error(request, UNKNOWN_PLAYER % {"name": name})
            return redirect(found)
        teammates.append(teammate)
    return _done(
        request,
        found,
        lambda: services.entry_register(
            tournament=found, captain=request.user, teammates=teammates, name=request.POST.get("name", "")
        ),
        REGISTERED % {"name": found.name},
    )


@login_required
@require_POST
def check_in(request: AuthenticatedHttpRequest, slug: str, tournament: str) -> HttpResponse:
    found = _tournament(slug, tournament)
    return _done_by_entry(
        request,
        found,
        lambda entry: services.entry_check_in(entry=entry, player=request.user),
        CHECKED_IN % {"name": found.name},
    )


@login_required
@require_POST
def withdraw(request: AuthenticatedHttpRequest, slug: str, tournament: str) -> HttpResponse:
    found = _tournament(slug, tournament)
    return _done_by_entry(
        request,
        found,
        lambda entry: services.entry_withdraw(entry=entry, by=request.user),
        WITHDRAWN % {"name": found.name},
    )


@login_required
@require_POST
def bye(request: AuthenticatedHttpRequest, slug: str, tournament: str) -> HttpResponse:
    found = _tournament(slug, tournament)
    round = _number(request.POST.get("round"))
    return _done_by_entry(
        request,
        found,
        lambda entry: services.entry_bye(entry=entry, round=round, by=request.user),
        BYE_ASKED % {"round": round},
    )


@login_required
@require_POST
def bye_cancel(request: AuthenticatedHttpRequest, slug: str, tournament: str) -> HttpResponse:
    return _done_by_entry(
        request,
        _tournament(slug, tournament),
        lambda entry: services.bye_cancel(entry=entry, by=request.user),
        BYE_CANCELLED,
    )


@login_required
@require_POST
def organise(request: AuthenticatedHttpRequest, slug: str, tournament: str) -> HttpResponse:
    """The organiser's actions, each with a reason: start, pause, resume, cancel, re-pair, decide, withdraw,
    give a bye and cancel it."""
    found = _tournament(slug, tournament)
    action, reason, by = request.POST.get("action", ""), request.POST.get("reason", ""), request.user
    acts = {
        "start": lambda: services.tournament_start(tournament=found, by=by),
        "pause": lambda: services.tournament_pause(tournament=found, by=by, reason=reason),
        "resume": lambda: services.tournament_resume(tournament=found, by=by, reason=reason),
        "cancel": lambda: services.tournament_cancel(tournament=found, by=by, reason=reason),
        "repair": lambda: services.round_repair(
            round=get_object_or_404(Round, tournament=found, number=found.current_round), by=by, reason=reason
        ),
        "decide": lambda: services.board_decide(
            board=get_object_or_404(Board, tournament=found, pk=_number(request.POST.get("board"))),
            by=by,
            result=_result(request.POST.get("result")),
            placements=_placements(request.POST.get("placements")),
            reason=reason,
        ),
        "withdraw": lambda: services.entry_withdraw(
            entry=get_object_or_404(Entry, tournament=found, pk=_number(request.POST.get("entry"))),
            by=by,
            reason=reason,
        ),
        "bye": lambda: services.entry_bye(
            entry=get_object_or_404(Entry, tournament=found, pk=_number(request.POST.get("entry"))),
            round=_number(request.POST.get("round")),
            by=by,
            reason=reason,
        ),
        "cancel_bye": lambda: services.bye_cancel(
            entry=get_object_or_404(Entry, tournament=found, pk=_number(request.POST.get("entry"))),
            by=by,
            reason=reason,
        ),
    }
    if action not in acts:
        messages.error(request, UNKNOWN_ACTION)
        return redirect(found)
    if not is_moderator(by):
        messages.error(request, services.NOT_ORGANISER)
        return redirect(found)
    return _done(request, found, acts[action], DONE[action])


def _duration(minutes: int) -> str:
    """1440 → "24 hours", 90 → "90 minutes", 2880 → "2 days"."""
    if minutes % (24 * 60) == 0 and minutes > 24 * 60:
        return f"{minutes // (24 * 60)} days"
    if minutes % 60 == 0:
        hours = minutes // 60
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{minutes} minutes"


def _number(value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        return 0


def _placements(value: str | None) -> list[int] | None:
    """ "2 1 3" or "2, 1, 3" → [2, 1, 3]; nothing given → None; anything else → [] (refused by the service)."""
    if not (value or "").strip():
        return None
    try:
        return [int(part) for part in (value or "").replace(",", " ").split()]
    except ValueError:
        return []


def _result(value: str | None) -> float:
    try:
        return float(value or "")
    except ValueError:
        return -1.0
