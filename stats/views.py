"""The statistics pages: a ladder's win rates per field value, and two players' head-to-head record."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from accounts.models import User
from ladder.models import Ladder
from stats import selectors


def ladder_stats(request: HttpRequest, slug: str) -> HttpResponse:
    """``?field=<name>`` picks the field; without it, the ladder's first counted field."""
    ladder = get_object_or_404(Ladder, slug=slug)
    fields = selectors.counted_fields(ladder)
    wanted = request.GET.get("field", "")
    field = next((item for item in fields if item.name == wanted), None)
    if wanted and field is None:
        raise Http404(f"{ladder.name} has no field {wanted!r}.")
    field = field or (fields[0] if fields else None)
    context = {
        "ladder": ladder,
        "fields": fields,
        "field": field,
        "rows": selectors.field_stats(field) if field is not None else [],
    }
    return render(request, "stats/ladder.html", context)


def versus(request: HttpRequest, slug: str, a: str, b: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    first = get_object_or_404(User, username__iexact=a, is_active=True)
    second = get_object_or_404(User, username__iexact=b, is_active=True)
    if first == second:
        raise Http404("A player has no record against themselves.")
    if (first.username, second.username) != (a, b):
        return redirect("stats:versus", slug=ladder.slug, a=first.username, b=second.username, permanent=True)
    context = {
        "ladder": ladder,
        "record": selectors.versus(ladder, first, second),
        "meetings": selectors.recent_meetings(ladder, first, second),
    }
    return render(request, "stats/versus.html", context)
