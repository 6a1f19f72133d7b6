from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from ladder import selectors, services
from ladder.models import Ladder
from ratings.models import PlayerRating


def home(request: HttpRequest) -> HttpResponse:
    ladders = selectors.ladder_list_with_activity(now=timezone.now())
    return render(request, "ladder/home.html", {"ladders": ladders})


def ladder_detail(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    now = timezone.now()
    membership = None
    if request.user.is_authenticated:
        membership = PlayerRating.objects.filter(ladder=ladder, player=request.user, is_active=True).first()
    context = {
        "ladder": ladder,
        "leaderboard": selectors.ladder_leaderboard(ladder=ladder, now=now),
        "membership": membership,
        "membership_rd": membership.rd_at(now) if membership else None,
    }
    return render(request, "ladder/detail.html", context)


@require_POST
@login_required
def ladder_join(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        services.ladder_join(ladder=ladder, player=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"Welcome to {ladder.name}! Your rating starts at {ladder.initial_rating:g}.")
    return redirect(ladder)


@require_POST
@login_required
def ladder_leave(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        services.ladder_leave(ladder=ladder, player=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"You left {ladder.name}. Your rating is kept if you join again.")
    return redirect(ladder)
