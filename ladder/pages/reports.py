"""Reports about players: the form a player sends one with, and a moderator's page of one case.

Both call ``ladder.moderation.reports``; a refusal comes back as the form's error (400),
never a 500. The desk (``ladder.pages.moderation``) lists the cases.
"""

from __future__ import annotations

import zoneinfo
from datetime import datetime, time
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from accounts.roles import is_moderator
from core.moments import moment_text
from ladder.matches import decisions
from ladder.models import Ladder, Match, MatchStatus, ReportReason
from ladder.moderation import refunds, reports
from ladder.pages.marks import mark_context

TEXT_MAX_LENGTH = 2000
RECENT_MATCHES = 20  # the matches a reporter may pick from
THANKS = "Thank you. The moderators will look at your report about {player}; you will be told the outcome."
DECIDED = "Decided: {count} report{s} about {player} closed; each player who reported is told the outcome."
NOT_A_MODERATOR = "Only moderators may see or decide reports about players."
REFUNDED = "Refunded {count} player{s}: {who}. Each is told the points and why."
VOIDED = "Voided {count} game{s} of {player} since {since}. The ladder is re-rated without them; each player is told."


class PlayerReportForm(forms.Form):
    reason = forms.ChoiceField(choices=ReportReason.choices, widget=forms.RadioSelect, label="What is wrong")
    match = forms.TypedChoiceField(
        coerce=int,
        empty_value=None,
        required=False,
        label="The match it is about",
        help_text="One of their last 20 matches in this ladder.",
    )
    text = forms.CharField(
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 6}),
        label="What happened",
        help_text="What you saw, when, and links to replays, screenshots or chat logs. Only moderators read it.",
    )

    def __init__(self, *args: Any, matches: list[Match], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        match_field = self.fields["match"]
        assert isinstance(match_field, forms.TypedChoiceField)
        match_field.choices = [("", "No particular match")] + [
            (match.pk, f"Match {match.pk}, played {moment_text(match.played_at)}") for match in matches
        ]


class VoidSinceForm(forms.Form):
    """Void a player's games since a day; its ids start ``void_``, apart from the page's other forms."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "void_%s")
        super().__init__(*args, **kwargs)

    since = forms.DateField(
        label="Void their games since",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Every game of theirs in this ladder played on or after this day, from its midnight in the "
        "ladder's time zone, is voided and the ladder re-rated without it.",
    )
    reason = forms.CharField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Reason",
        help_text="Kept with each match and told to every player of it.",
    )


class DecisionForm(forms.Form):
    """The case's decision; its ids start ``decide_``, apart from the mark form's fields on the same page."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "decide_%s")
        super().__init__(*args, **kwargs)

    outcome = forms.ChoiceField(
        choices=[("acted", "Acted on it"), ("dismissed", "Nothing to act on")],
        widget=forms.RadioSelect,
        label="Outcome",
        help_text="The players who reported are told this, and nothing more.",
    )
    note = forms.CharField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Note for the moderators",
        help_text="What you found and did (a suspension, a void, a mark). Moderators read it; players do not.",
    )


def _recent_matches(ladder: Ladder, player: User) -> list[Match]:
    return list(
        Match.objects.filter(ladder=ladder, participants__player=player)
        .exclude(status=MatchStatus.CANCELLED)
        .order_by("-played_at", "-pk")[:RECENT_MATCHES]
    )


@require_http_methods(["GET", "POST"])
@login_required
def player_report(request: AuthenticatedHttpRequest, slug: str, username: str) -> HttpResponse:
    """Report ``username``'s conduct in the ladder to its moderators."""
    ladder = get_object_or_404(Ladder, slug=slug)
    player = get_object_or_404(User, username__iexact=username, is_active=True)
    if player.pk == request.user.pk:
        raise Http404(reports.SELF)
    matches = _recent_matches(ladder, player)
    if request.method == "POST":
        form = PlayerReportForm(request.POST, matches=matches)
        if form.is_valid():
            match = next((m for m in matches if m.pk == form.cleaned_data["match"]), None)
            try:
                reports.player_report_file(
                    ladder=ladder,
                    player=player,
                    reporter=request.user,
                    reason=form.cleaned_data["reason"],
                    text=form.cleaned_data["text"],
                    match=match,
                    now=timezone.now(),
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, THANKS.format(player=player.username))
                return redirect("ladder:player", slug=ladder.slug, username=player.username)
        status = 400
    else:
        chosen = request.GET.get("match", "")
        form = PlayerReportForm(
            initial={"match": int(chosen) if chosen.isdigit() else None, "reason": request.GET.get("reason")},
            matches=matches,
        )
        status = 200
    context = {"ladder": ladder, "player": player, "form": form, "per_day": reports.REPORTS_PER_DAY}
    return render(request, "ladder/player_report.html", context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def report_case(request: AuthenticatedHttpRequest, slug: str, username: str) -> HttpResponse:
    """A moderator's page of the open reports about one player in one ladder, and the decision."""
    ladder, player = _case_of(request, slug, username)
    status = 200
    form = DecisionForm()
    if request.method == "POST":
        form = DecisionForm(request.POST)
        if form.is_valid():
            try:
                count = reports.player_reports_decide(
                    ladder=ladder,
                    player=player,
                    moderator=request.user,
                    acted=form.cleaned_data["outcome"] == "acted",
                    note=form.cleaned_data["note"],
                    now=timezone.now(),
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, DECIDED.format(count=count, s="" if count == 1 else "s", player=player))
                return redirect("moderation")
        status = 400
    return _case_page(request, ladder, player, form=form, status=status)


def _case_of(request: AuthenticatedHttpRequest, slug: str, username: str) -> tuple[Ladder, User]:
    """The ladder and the player of a case page's request; 403 for anyone but a moderator."""
    if not is_moderator(request.user):
        raise PermissionDenied(NOT_A_MODERATOR)
    return get_object_or_404(Ladder, slug=slug), get_object_or_404(User, username=username)


def _case_page(
    request: AuthenticatedHttpRequest,
    ladder: Ladder,
    player: User,
    *,
    form: DecisionForm,
    status: int,
    refund_error: str = "",
    void_form: VoidSinceForm | None = None,
) -> HttpResponse:
    case, decided = reports.player_case(ladder=ladder, player=player)
    offered = refunds.refunds_offered(ladder=ladder, offender=player, now=timezone.now())
    context = {
        "ladder": ladder,
        "player": player,
        "case": case,
        "decided": decided,
        "form": form,
        "refunds": [refund for refund in offered if refund.points > 0],
        "refund_error": refund_error,
        "void_form": void_form or VoidSinceForm(),
        **mark_context(player),
    }
    return render(request, "ladder/report_case.html", context, status=status)


@require_POST
@login_required
def refund(request: AuthenticatedHttpRequest, slug: str, username: str) -> HttpResponse:
    """Gives the victims of ``username``'s games in the refund window back what they lost (§15, "Refunds")."""
    ladder, player = _case_of(request, slug, username)
    try:
        given = refunds.refunds_apply(ladder=ladder, offender=player, moderator=request.user, now=timezone.now())
    except ValidationError as exc:
        return _case_page(request, ladder, player, form=DecisionForm(), status=400, refund_error=" ".join(exc.messages))
    who = ", ".join(f"{refund.username} +{refund.points:g}" for refund in given)
    messages.success(request, REFUNDED.format(count=len(given), s="" if len(given) == 1 else "s", who=who))
    return redirect("ladder:report_case", slug=ladder.slug, username=player.username)


@require_POST
@login_required
def void_since(request: AuthenticatedHttpRequest, slug: str, username: str) -> HttpResponse:
    """Voids ``username``'s games in ``slug`` since a day (§15, "Refunds": the other remedy)."""
    ladder, player = _case_of(request, slug, username)
    form = VoidSinceForm(request.POST)
    if form.is_valid():
        day = form.cleaned_data["since"]
        since = datetime.combine(day, time.min, tzinfo=zoneinfo.ZoneInfo(ladder.time_zone))
        try:
            voided = decisions.matches_void_since(
                ladder=ladder,
                player=player,
                since=since,
                moderator=request.user,
                reason=form.cleaned_data["reason"],
                now=timezone.now(),
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            count = len(voided)
            text = VOIDED.format(count=count, s="" if count == 1 else "s", player=player, since=f"{day:%d %b %Y}")
            messages.success(request, text)
            return redirect("ladder:report_case", slug=ladder.slug, username=player.username)
    return _case_page(request, ladder, player, form=DecisionForm(), status=400, void_form=form)
