"""``/ladders/``, every ladder as the home page lists them; and leaving one, confirmed on its own page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from accounts.http import AuthenticatedHttpRequest
from ladder import membership as members
from ladder.membership import NOT_MEMBER
from ladder.models import Ladder
from ladder.standings.ladders import ladder_list_with_activity
from ratings.models import PlayerRating

LEFT = "You left %(ladder)s. Your rating is kept if you join again."


@require_GET
def ladder_list(request: HttpRequest) -> HttpResponse:
    ladders = ladder_list_with_activity(now=timezone.now())
    return render(request, "ladder/list.html", {"ladders": ladders})


@require_http_methods(["GET", "POST"])
@login_required
def ladder_leave(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """GET asks (a page of its own, so one stray tap never leaves); its form's POST leaves."""
    ladder = get_object_or_404(Ladder, slug=slug)
    if request.method == "POST":
        try:
            members.ladder_leave(ladder=ladder, player=request.user)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, LEFT % {"ladder": ladder.name})
        return redirect(ladder)
    membership = PlayerRating.objects.filter(ladder=ladder, player=request.user, is_active=True).first()
    if membership is None:
        messages.error(request, NOT_MEMBER % {"ladder": ladder.name})
        return redirect(ladder)
    return render(request, "ladder/leave.html", {"ladder": ladder, "membership": membership})
