"""A game of a best-of-N series, from the match page's buttons (docs/rules.md §13, "Series").

The form carries the ladder's match fields as the result form does (``{% match_field_inputs %}``);
a refused value shows the match page again, the error next to its field.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from ladder.matches.series import series_answers, series_report_game
from ladder.models import Match, MatchStatus
from ladder.pages.field_forms import MatchFieldsForm, result_fields_form
from ladder.pages.views import match_detail

CHOOSE = "Choose whether you won, lost or drew this game."
RECORDED = "Game %(number)d recorded."
SERIES_REPORTED = "Series over: its result is reported, and your opponent confirms it."
SERIES_CLOSED = "Series over. Each game is rated once your opponent confirms it."
GAME_RATED_SOON = "Game %(number)d recorded; it is rated once your opponent confirms it."


@require_POST
@login_required
def series_game(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """``I won game N`` / ``I lost game N`` / ``Draw``: the next game of the series, from one of its players."""
    match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
    outcome = request.POST.get("outcome", "")
    mine = match.participants.filter(player=request.user).values_list("side__index", flat=True).first()
    if outcome not in {"won", "lost", "draw"} or mine is None:
        messages.error(request, CHOOSE)
        return redirect(match)
    winner_side = {"won": mine, "lost": 1 - mine, "draw": None}[outcome]
    number = match.series_games.count() + 1
    form = result_fields_form(match, request.user, request.POST)
    if not form.is_valid():  # nothing is recorded: the page again, the errors next to the fields
        request.match_fields_form = form  # type: ignore[attr-defined]  # read by ``{% match_field_inputs %}``
        return match_detail(request, pk, status=400)
    try:
        answers = series_answers(
            match=match, match_values=form.match_values(), player_values=form.player_values(form.by_slot)
        )
        match = series_report_game(match=match, reporter=request.user, winner_side=winner_side, answers=answers)
    except ValidationError as exc:
        if hasattr(exc, "error_dict"):  # a match field's value: the page again, the error next to the field
            return _refused_fields(request, match.pk, form, exc)
        messages.error(request, " ".join(exc.messages))
        return redirect(match)
    if match.status == MatchStatus.PENDING:
        messages.success(request, SERIES_REPORTED)
    elif match.status == MatchStatus.CANCELLED:
        messages.success(request, SERIES_CLOSED)
    elif match.ladder.rate_each_game:
        messages.success(request, GAME_RATED_SOON % {"number": number})
    else:
        messages.success(request, RECORDED % {"number": number})
    return redirect(match)


def _refused_fields(
    request: AuthenticatedHttpRequest, pk: int, form: MatchFieldsForm, exc: ValidationError
) -> HttpResponse:
    form.show_errors(exc, form.by_slot)
    request.match_fields_form = form  # type: ignore[attr-defined]  # read by ``{% match_field_inputs %}``
    return match_detail(request, pk, status=400)
