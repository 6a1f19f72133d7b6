"""``/ladders/``: every ladder, as the home page lists them below a player's own."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from ladder import selectors


@require_GET
def ladder_list(request: HttpRequest) -> HttpResponse:
    ladders = selectors.ladder_list_with_activity(now=timezone.now())
    return render(request, "ladder/list.html", {"ladders": ladders})
