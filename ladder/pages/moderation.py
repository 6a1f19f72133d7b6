"""The moderation desk and the match page's Moderator box (docs/rules.md §18).

The desk lists what waits for a moderator; the box's forms post here and call the same
services as the admin's actions (``ladder.matches.decisions``). A refusal comes back as
the form's error on the match page, never a 500; anyone but a moderator gets 403.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from accounts.roles import is_moderator
from ladder.matches import decisions as moderation
from ladder.matches.reads import match_summary
from ladder.models import Match
from ladder.moderation.desk import moderation_desk
from ladder.moderation.reports import report_queue
from ladder.pages.moderation_forms import CorrectionForm, ReasonForm
from ratings.services import replay_job_for_match

NOT_A_MODERATOR = "Only moderators may see the moderation desk or decide a match."
VOIDED = "Voided. The result no longer counts; the players are told why."
CORRECTED = "Corrected. The players are told the new result and why."
CONFIRMED = "Confirmed as reported."


def _moderator_only(request: AuthenticatedHttpRequest) -> None:
    if not is_moderator(request.user):
        raise PermissionDenied(NOT_A_MODERATOR)


@require_GET
@login_required
def desk(request: AuthenticatedHttpRequest) -> HttpResponse:
    """A moderator's home: disputed results, no-show claims, expired and flagged matches, newest first,
    and the reports about players, highest score first."""
    _moderator_only(request)
    cases, case_count = report_queue()
    context = {"desk": moderation_desk(now=timezone.now()), "cases": cases, "case_count": case_count}
    return render(request, "ladder/moderation.html", context)


@require_POST
@login_required
def match_void(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    _moderator_only(request)
    match = get_object_or_404(Match, pk=pk)
    form = ReasonForm(request.POST, prefix="void")
    if form.is_valid():
        try:
            moderation.match_void(match=match, moderator=request.user, reason=form.cleaned_data["reason"])
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, VOIDED)
            return redirect(match)
    return _match_page(request, pk, {"void_form": form})


@require_POST
@login_required
def match_correct(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    _moderator_only(request)
    match = get_object_or_404(Match, pk=pk)
    sides = list(match.sides.order_by("index").prefetch_related("participants__player"))
    form = CorrectionForm(request.POST, prefix="correct", sides=sides)
    if form.is_valid():
        try:
            moderation.match_correct(
                match=match, moderator=request.user, placements=form.placements(), reason=form.cleaned_data["reason"]
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, CORRECTED)
            return redirect(match)
    return _match_page(request, pk, {"correct_form": form})


@require_POST
@login_required
def match_moderate_confirm(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    _moderator_only(request)
    match = get_object_or_404(Match, pk=pk)
    form = ReasonForm(request.POST, prefix="confirm")
    if form.is_valid():
        try:
            moderation.match_moderate_confirm(match=match, moderator=request.user, reason=form.cleaned_data["reason"])
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, CONFIRMED)
            return redirect(match)
    return _match_page(request, pk, {"confirm_form": form})


def _match_page(request: AuthenticatedHttpRequest, pk: int, forms: dict[str, Any]) -> HttpResponse:
    """The match page again, with the refused form and its errors in the Moderator box (400)."""
    summary = match_summary(pk=pk, viewer=request.user)
    if summary is None:
        raise Http404("No such match.")
    match = summary.match
    re_rating = replay_job_for_match(match=match) if match.rated_at is not None else None
    context = {"summary": summary, "match": match, "re_rating": re_rating, **forms}
    return render(request, "ladder/match.html", context, status=400)
