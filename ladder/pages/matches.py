"""A ladder's matches, newest first, filtered by their match fields (docs/match-fields.md).

``/ladders/<slug>/matches/?map=Crater&tribe=Empire``: each parameter named after one of the
ladder's fields keeps the matches with that value (for a per-player field, any player's).
The filters in force are shown above the list, each with a link that removes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import urlencode

from ladder.fields.answers import ladder_fields
from ladder.fields.reads import filter_by_fields
from ladder.matches.reads import match_summaries, matches_with_details
from ladder.models import OPEN_STATUSES, Ladder, Match, MatchStatus

MATCHES_PAGE_SIZE = 25
FILTER_MAX = 200


@dataclass(frozen=True, slots=True)
class ActiveFilter:
    """A filter in force: what it keeps, and the address of the list without it."""

    label: str
    value: str
    without: str


def ladder_matches(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    fields = ladder_fields(ladder)
    wanted = {f.name: request.GET.get(f.name, "").strip()[:FILTER_MAX] for f in fields}
    wanted = {name: value for name, value in wanted.items() if value}
    played = Match.objects.filter(ladder=ladder).exclude(status__in=[*OPEN_STATUSES, MatchStatus.CANCELLED])
    matches = filter_by_fields(played, wanted).order_by("-played_at", "-id")
    page = Paginator(matches, MATCHES_PAGE_SIZE).get_page(request.GET.get("page"))
    summaries = match_summaries(matches_with_details(Match.objects.filter(pk__in=page.object_list)))
    summaries.sort(key=lambda s: (s.match.played_at, s.match.pk), reverse=True)
    labels = {f.name: f.label for f in fields}
    active = [
        ActiveFilter(labels[name], value, "?" + urlencode({k: v for k, v in wanted.items() if k != name}))
        for name, value in wanted.items()
    ]
    context = {
        "ladder": ladder,
        "fields": fields,
        "rows": [(f, wanted.get(f.name, "")) for f in fields],
        "active": active,
        "page": page,
        "summaries": summaries,
    }
    return render(request, "ladder/matches.html", context)
