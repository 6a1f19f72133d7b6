"""Ladder pages: thin views that parse input, call one service or selector, and render.

Every refusal comes from a service as a ``ValidationError`` whose messages are shown as
they are, so the wording lives in one place (``ladder.matches`` and ``ladder.membership``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from rest_framework.exceptions import Throttled

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from core.http import HtmxHttpRequest
from core.redirects import safe_next
from core.throttling import search_allow
from ladder import membership, permissions
from ladder.fields import answers as field_services
from ladder.matches import reads as match_reads
from ladder.matches import reporting as match_services
from ladder.matches.checks import SideInput
from ladder.matches.conversation_reads import Typed, match_conversation
from ladder.matches.notes import readable_note
from ladder.matches.reads import claims_awaiting, match_summary
from ladder.matches.settling import settle_match
from ladder.models import Ladder, LeaderboardScale, Match, MatchStatus, Suspension
from ladder.moderation import fair_play, suspensions
from ladder.pages import forms
from ladder.pages.field_forms import MatchFieldsForm, Slot, result_fields_form
from ladder.pages.home import player_home
from ladder.pages.leaderboard import LEADERBOARD_PANEL, shared_page, shared_panel
from ladder.pages.players import PlayerStanding, player_standing
from ladder.standings import charts
from ladder.standings.ladders import ladder_list_with_activity
from ladder.standings.leaderboard import ladder_leaderboard_cached, ladder_movers_cached, player_row
from ladder.standings.ranking import unranked_reasons
from ratings.models import PlayerRating
from ratings.services import replay_job_for_match

REPORTED = "Reported. %(who)s %(have)s %(hours)d hours to confirm."
RATED = "Confirmed and rated."
CONFIRMED_WAITING = "Confirmed. The match is rated once every side has answered."
DISPUTED = "Disputed. A moderator will look at the match."
SEARCH_LIMITED = (
    "Too many new searches from you for now: you can search again in %(seconds)d seconds. "
    "Meanwhile, here is the top of the leaderboard."
)


def home(request: HttpRequest) -> HttpResponse:
    """Every ladder; and above them, for a signed-in player, their ladders, what waits for them and their games."""
    now = timezone.now()
    ladders = ladder_list_with_activity(now=now)
    user = request.user
    mine = player_home(player=user, now=now) if isinstance(user, User) and user.is_authenticated else None
    return render(request, "ladder/home.html", {"ladders": ladders, "mine": mine})


@dataclass(frozen=True, slots=True)
class RefusedSearch:
    """A search the search limit refused: what was asked, and when the client may search again."""

    query: str
    bots: str
    retry_after: int


def ladder_detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The ladder, its leaderboard (from the cache the API's leaderboard uses) and the visitor's standing.

    A search or bot filter not in the cache counts against the client's API search limit
    (``API_THROTTLE_SEARCH``); over it the page answers 429 with ``Retry-After`` and shows
    the whole leaderboard with a note saying when to search again.
    """
    ladder = get_object_or_404(Ladder, slug=slug)
    now = timezone.now()
    seconds = settings.API_LEADERBOARD_CACHE_SECONDS
    refused = None
    shared = shared_page(request, ladder, now, seconds)
    if shared is not None:
        leaderboard, html = shared
        context: dict[str, Any] = {"ladder": ladder, "leaderboard": leaderboard, "refused": None}
        context["leaderboard_html"] = html
    else:
        query, bots = request.GET.get("q", "")[:30], request.GET.get("bots", "")
        try:
            expires, leaderboard = ladder_leaderboard_cached(
                ladder=ladder,
                now=now,
                seconds=seconds,
                page=request.GET.get("page"),
                query=query,
                bots=bots,
                before_search=lambda: search_allow(request),
            )
        except Throttled as exc:
            wait: int | None = exc.wait  # type: ignore[attr-defined]  # DRF sets it; its stubs leave it out
            refused = RefusedSearch(query=query.strip(), bots=bots, retry_after=wait or 1)
            if request.htmx:  # htmx swaps no 429: it loads the whole page, which says what happened
                headers = {"Retry-After": str(refused.retry_after), "HX-Redirect": request.get_full_path()}
                return HttpResponse(SEARCH_LIMITED % {"seconds": refused.retry_after}, status=429, headers=headers)
            expires, leaderboard = ladder_leaderboard_cached(ladder=ladder, now=now, seconds=seconds)
        context = {"ladder": ladder, "leaderboard": leaderboard, "refused": refused}
        if refused is not None:
            context["refused_message"] = SEARCH_LIMITED % {"seconds": refused.retry_after}
        else:
            context["leaderboard_html"] = shared_panel(request, ladder, leaderboard, expires)
    if request.htmx and request.htmx.target == "leaderboard-panel":
        if context.get("leaderboard_html"):
            return HttpResponse(context["leaderboard_html"])
        return render(request, LEADERBOARD_PANEL, context)
    membership = None
    if request.user.is_authenticated:
        in_force = suspensions.in_force_id(ladder=ladder, player=request.user, now=now)
        membership = (
            PlayerRating.objects.filter(ladder=ladder, player=request.user, is_active=True)
            .annotate(suspension_id=in_force)
            .first()
        )
    context["membership"] = membership
    if membership:
        membership.ladder = ladder
        context["membership_rd"] = rd_now = membership.rd_at(now)
        context["membership_reasons"] = unranked_reasons(ladder=ladder, rating=membership, rd_now=rd_now, now=now)
        # The rank and the scale's value, as the home page shows them (one ranking statement).
        context["membership_row"] = player_row(rating=membership, now=now)
    # The matchmaking panel: for members of a ladder whose queue offers formats; a ladder without one explains itself.
    # The snapshot the page's rank changes count from is the latest one: the movers end there too.
    context["movers"] = ladder_movers_cached(leaderboard.since) if leaderboard.since else None
    # Read with the membership: a query more only for a suspended member, who sees why instead of the queue.
    suspension_id = getattr(membership, "suspension_id", None)
    suspension = Suspension.objects.get(pk=suspension_id, ladder=ladder) if suspension_id else None
    if suspension is not None:
        suspension.ladder = ladder
    context["suspended_message"] = suspensions.suspended_message(suspension) if suspension else ""
    # Suspended (said above), or an account too new to report games played outside the queue: why, not the button.
    member = request.user if membership and isinstance(request.user, User) else None
    refusal = fair_play.new_account_refusal(ladder=ladder, reporter=member, now=now) if member else ""
    context["report_refusal"] = refusal if suspension is None else ""
    context["may_report"] = bool(membership) and suspension is None and not refusal
    context["show_queue"] = (bool(membership) or not ladder.queue_format_list) and suspension is None
    if refused is not None:
        response = render(request, "ladder/detail.html", context, status=429)
        response["Retry-After"] = str(refused.retry_after)
        return response
    return render(request, "ladder/detail.html", context)


@require_POST
@login_required
def ladder_join(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        membership.ladder_join(ladder=ladder, player=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"Welcome to {ladder.name}! Your rating starts at {ladder.initial_rating:g}.")
    return redirect(ladder)


# Reporting -----------------------------------------------------------------------------


@login_required
def match_report(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The 1 v 1 form and, where the ladder allows them (or for moderators and trusted
    reporters, who report other people's games), the sides form. Only the submitted one is bound.
    """
    ladder = get_object_or_404(Ladder, slug=slug)
    user = request.user
    is_member = PlayerRating.objects.filter(ladder=ladder, player=user, is_active=True).exists()
    for_others = permissions.may_report_for_others(user, ladder)
    # Suspended, or too new: said before any form is filled, in the words the report itself would be refused with.
    refusal = fair_play.reporter_refusal(ladder=ladder, reporter=user, now=timezone.now()) if is_member else ""
    if refusal:
        status = 403 if request.method == "POST" else 200
        return render(request, "ladder/report.html", {"ladder": ladder, "refusal": refusal}, status=status)
    show_sides = ladder.has_team_formats or for_others
    kind = request.POST.get("kind") if request.method == "POST" else None
    duel = forms.OneVsOneReportForm(
        request.POST if kind == "1v1" else None, ladder=ladder, reporter=user, initial=_initial_opponent(request)
    )
    team = forms.TeamReportForm(
        request.POST if kind == "sides" else None,
        ladder=ladder,
        reporter=user,
        rows=_int(request.GET.get("sides"), forms.SIDES_WITHOUT_JS),
    )
    fields = field_services.ladder_fields(ladder)
    duel_fields = MatchFieldsForm(
        request.POST if kind == "1v1" else None, fields=fields, slots=DUEL_SLOTS, prefix="duel-f"
    )
    team_fields = MatchFieldsForm(
        request.POST if kind == "sides" else None,
        fields=fields,
        pairs=True,
        player_rows=team.most_players,
        prefix="team-f",
    )
    bound = duel if kind == "1v1" else team if kind == "sides" else None
    bound_fields = duel_fields if kind == "1v1" else team_fields
    valid = bound is not None and bound.is_valid()
    if bound is not None and bound_fields.is_valid() and valid:
        sides = bound.sides()
        by_slot = {"me": user, "opponent": sides[1].players[0]} if kind == "1v1" else {}
        players = [player for side in sides for player in side.players]
        answers = _checked_answers(bound_fields, ladder, players, by_slot)  # None: errors shown by the fields
        match = None if answers is None else _report_or_errors(bound, ladder, user, sides, answers)
        if match is not None:
            messages.success(request, _reported_message(match, ladder, sides, user))
            return redirect(match)
    context = {
        "ladder": ladder,
        "duel": duel,
        "team": team,
        "duel_fields": duel_fields,
        "team_fields": team_fields,
        "can_report": is_member or for_others,
        "show_duel": ladder.allow_one_vs_one and is_member,
        "show_sides": show_sides,
    }
    return render(request, "ladder/report.html", context, status=400 if bound is not None else 200)


DUEL_SLOTS = [Slot("me", "You"), Slot("opponent", "Opponent")]


def _report_or_errors(
    bound: forms.OneVsOneReportForm | forms.TeamReportForm,
    ladder: Ladder,
    user: User,
    sides: Sequence[SideInput],
    answers: list[field_services.Answer],
) -> Match | None:
    """The match reported, or None with the service's refusal on the form."""
    try:
        return match_services.match_report(
            ladder=ladder, reporter=user, sides=sides, played_at=bound.cleaned_data.get("played_at"), answers=answers
        )
    except ValidationError as exc:
        if hasattr(exc, "error_dict"):  # about one field, e.g. a played-at time too far back
            for field, field_messages in exc.message_dict.items():
                bound.add_error(field if field in bound.fields else None, field_messages)
        else:
            for message in exc.messages:
                bound.add_error(None, message)
        return None


def _checked_answers(
    form: MatchFieldsForm, ladder: Ladder, players: Sequence[User], by_slot: dict[str, User]
) -> list[field_services.Answer] | None:
    """The report's match fields, checked; None with the errors shown next to the fields."""
    try:
        return field_services.clean_answers(
            ladder=ladder,
            fields=form.match_fields,
            players=players,
            match_values=form.match_values(),
            player_values=form.player_values(by_slot),
        )
    except ValidationError as exc:
        form.show_errors(exc, by_slot)
        return None


def _int(value: str | None, default: int) -> int:
    try:
        return int(value or default)
    except ValueError:
        return default


def _initial_opponent(request: HttpRequest) -> dict[str, str]:
    opponent = request.GET.get("opponent", "")[:30]
    return {"opponent": opponent} if opponent else {}


def _reported_message(match: Match, ladder: Ladder, sides: Sequence[SideInput], reporter: User) -> str:
    if match.status == MatchStatus.CONFIRMED:
        return RATED
    opponent = forms.one_v_one_opponent(sides, reporter)
    if opponent is not None:
        who, have = opponent.username, "has"
    elif len(sides) == 2:
        who, have = "The other side", "has"
    else:
        who, have = "The other sides", "have"
    return REPORTED % {"who": who, "have": have, "hours": ladder.confirmation_hours}


@require_GET
@login_required
def match_report_side(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """One more side row for the sides form (htmx), numbered from the formset's current count."""
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        index = int(request.GET.get("sides-TOTAL_FORMS", ""))
    except ValueError:
        return HttpResponse("Give the current number of sides as sides-TOTAL_FORMS.", status=400)
    most = min(ladder.max_players, forms.MAX_PLAYERS_PER_MATCH)
    if not 0 <= index < most:
        return HttpResponse(status=204)  # nothing to add; htmx leaves the page alone
    context = {"ladder": ladder, "form": forms.side_form(index=index), "total": index + 1, "most": most}
    return render(request, "ladder/report.html#side-added", context)


# Matches -------------------------------------------------------------------------------


def match_detail(request: HttpRequest, pk: int, *, typed: Typed | None = None, status: int = 200) -> HttpResponse:
    """The match page; ``typed``: a refused comment or link, shown again with its error (``views_conversation``)."""
    viewer = request.user if isinstance(request.user, User) else None  # a User is always signed in
    summary = match_summary(pk=pk, viewer=viewer)
    if summary is None:
        raise Http404("No such match.")
    if summary.match.paired_by_queue and settle_match(summary.match):  # a deadline ran out since: read it again
        summary = match_summary(pk=pk, viewer=viewer)
        assert summary is not None
    match = summary.match
    # Only a rated match has ratings a replay can still change (one query, only then).
    re_rating = replay_job_for_match(match=match) if match.rated_at is not None else None
    names = [[line.player.username for line in side.players] for side in summary.sides]
    note = readable_note(match.moderator_note, names)
    context = {"summary": summary, "match": match, "re_rating": re_rating, "note": note}
    # A game the queue formed keeps each side's predicted chance: the page shows it with the result.
    context["predicted"] = any(side.side.win_probability is not None for side in summary.sides)
    context["conversation"] = match_conversation(summary=summary, viewer=viewer, typed=typed)
    return render(request, "ladder/match.html", context, status=status)


@require_POST
@login_required
def match_result(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The result of a match the queue formed, from one of its players: won, lost or drawn
    for two sides; each side's place (``place-<index>``) for a free-for-all."""
    match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
    outcome = request.POST.get("outcome", "")
    mine = match.participants.filter(player=request.user).values_list("side__index", flat=True).first()
    sides = match.sides.count()
    if mine is not None and sides > 2:
        placements = _places(request, sides)
        if placements is None:
            messages.error(request, f"Give each player a place from 1 to {sides}.")
            return redirect(match)
    elif outcome not in {"won", "lost", "draw"} or mine is None:
        messages.error(request, "Choose whether you won, lost or drew this match.")
        return redirect(match)
    else:
        first, second = {"won": (1, 2), "lost": (2, 1), "draw": (1, 1)}[outcome]
        placements = [first, second] if mine == 0 else [second, first]
    form = result_fields_form(match, request.user, request.POST)
    answers = _checked_answers(form, match.ladder, form.players, form.by_slot) if form.is_valid() else None
    if answers is None:  # the match page again, the errors next to the fields (``{% match_field_inputs %}``)
        request.match_fields_form = form  # type: ignore[attr-defined]
        return match_detail(request, pk, status=400)
    try:
        match_services.match_report_result(match=match, reporter=request.user, placements=placements, answers=answers)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, "Result reported. The other side confirms it.")
    return redirect(match)


def _places(request: HttpRequest, sides: int) -> list[int] | None:
    """Each side's place from the form's ``place-<index>`` fields, or None if one is missing or out of range."""
    places = []
    for index in range(sides):
        value = request.POST.get(f"place-{index}", "")
        if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= sides:
            return None
        places.append(int(value))
    return places


@require_POST
@login_required
def match_confirm(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    match = get_object_or_404(Match, pk=pk)
    try:
        match = match_services.match_confirm(match=match, user=request.user)
    except ValidationError as exc:
        return _answered(request, match, error=" ".join(exc.messages))
    return _answered(request, match, notice=RATED if match.status == MatchStatus.CONFIRMED else CONFIRMED_WAITING)


@require_POST
@login_required
def match_dispute(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    match = get_object_or_404(Match, pk=pk)
    reason, refused = forms.DisputeForm(request.POST).reason_or_error()
    if refused:
        return _answered(request, match, error=refused)
    try:
        match = match_services.match_dispute(match=match, user=request.user, reason=reason)
    except ValidationError as exc:
        return _answered(request, match, error=" ".join(exc.messages))
    return _answered(request, match, notice=DISPUTED)


def _answered(request: AuthenticatedHttpRequest, match: Match, *, notice: str = "", error: str = "") -> HttpResponse:
    """After an answer: htmx (the "To confirm" page) gets the match's card back, in place;
    a plain form post gets a message and goes back to ``next`` or the match page.
    """
    if request.htmx:
        summary = match_summary(pk=match.pk, viewer=request.user)
        context = {"summary": summary, "notice": notice, "error": error}
        return render(request, "ladder/awaiting.html#match-card", context)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, notice)
    return redirect(safe_next(request, request.POST.get("next")) or match)


@login_required
def matches_awaiting(request: AuthenticatedHttpRequest) -> HttpResponse:
    summaries = match_reads.matches_awaiting(user=request.user)
    # Players who reported more than one result you have not answered: dispute them all at once.
    by_reporter = Counter(s.match.reported_by for s in summaries if s.answerable and s.match.reported_by)
    flooders = [(reporter, count) for reporter, count in by_reporter.most_common() if count > 1]
    context = {"summaries": summaries, "flooders": flooders, "claims": claims_awaiting(user=request.user)}
    return render(request, "ladder/awaiting.html", context)


@require_POST
@login_required
def matches_dispute_all(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Dispute every unanswered result one player reported against you."""
    reporter = User.objects.filter(username=request.POST.get("reporter", "")[:30].replace("\x00", "")).first()
    if reporter is None:
        messages.error(request, "Choose whose results to dispute.")
        return redirect("ladder:awaiting")
    reason, refused = forms.DisputeForm(request.POST).reason_or_error()
    if refused:
        messages.error(request, refused)
        return redirect("ladder:awaiting")
    try:
        disputed = match_services.match_dispute_all_from(user=request.user, reporter=reporter, reason=reason)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        count = len(disputed)
        messages.success(
            request,
            f"Disputed {count} result{pluralize(count)} {reporter.username} reported. A moderator will decide."
            if count
            else f"{reporter.username} has no unanswered results against you.",
        )
    return redirect("ladder:awaiting")


# Players -------------------------------------------------------------------------------


def player_in_ladder(request: HttpRequest, slug: str, username: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    player = get_object_or_404(User, username__iexact=username, is_active=True)
    if player.username != username:
        return redirect("ladder:player", slug=ladder.slug, username=player.username, permanent=True)
    standing = player_standing(ladder=ladder, player=player, now=timezone.now(), page=request.GET.get("page"))
    if standing is None:
        raise Http404(f"{player.username} has never played in {ladder.name}.")
    # x is the event's instant (a match's played-at time), not ``rd_as_of_after``: that one is
    # the later of the game and the player's previous RD clock, which after joining can sit
    # past every game reported for the days before.
    points = [
        charts.HistoryPoint(at=change.event.at, rating=change.rating_after, rd=change.rd_after, delta=change.delta)
        for change in standing.history
    ]
    start = _joined_point(standing)
    scale = LeaderboardScale(ladder.leaderboard_scale)
    ranks = [charts.RankPoint(day=p.date, rank=p.rank, label=_scale_label(scale, p.value)) for p in standing.ranks]
    context = {
        "ladder": ladder,
        "player": player,
        "standing": standing,
        "row": standing.row,
        "chart_wide": charts.rating_history_chart(points, start=start, width=760, height=280, font_size=12),
        "chart_narrow": charts.rating_history_chart(points, start=start, width=340, height=240, font_size=12),
        "rank_wide": charts.rank_history_chart(ranks, width=760, height=220, font_size=12),
        "rank_narrow": charts.rank_history_chart(ranks, width=340, height=200, font_size=12),
        "suspended_message": _suspended_words(request, ladder, player),
    }
    return render(request, "ladder/player.html", context)


def _suspended_words(request: HttpRequest, ladder: Ladder, player: User) -> str:
    """Why ``player`` is not listed: the reason for the player themselves, the end date for everyone."""
    suspension = suspensions.active_suspension(ladder=ladder, player=player, now=timezone.now())
    if suspension is None:
        return ""
    if request.user.pk == player.pk:
        return suspensions.suspended_message(suspension)
    return f"{player.username} is suspended from {ladder.name} {suspensions.until_words(suspension.ends_at)}."


def _joined_point(standing: PlayerStanding) -> charts.HistoryPoint | None:
    """Where the rating chart starts: the rating and RD the player joined with (1500 ± 350
    by default), read from their first change since the ladder's initial values may have
    changed since.

    It sits at the joining time, but no further left of the first game than a tenth of the
    games' span (at least an hour): a year between joining and a first game would otherwise
    squeeze every game against the right edge. Its tooltip names the real joining day.
    """
    if not standing.history:
        return None
    first = standing.history[0]
    games = [change.event.at for change in standing.history]
    gap = max((max(games) - min(games)) / 10, timedelta(hours=1))
    joined = standing.row.rating.joined_at
    at = min(max(joined, first.event.at - gap), first.event.at)
    local = timezone.localtime(joined)
    label = f"joined {local.day} {local:%b %Y}"
    return charts.HistoryPoint(at=at, rating=first.rating_before, rd=first.rd_before, delta=0.0, label=label)


def _scale_label(scale: LeaderboardScale, value: float) -> str:
    if scale == LeaderboardScale.GXE:
        return f"GXE {value:.2f}%"
    if scale == LeaderboardScale.TR:
        return f"TR {value:,.0f}"
    return f"{value:.0f} conservative"
