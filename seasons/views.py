"""A ladder's seasons: the list, and one season's standings page by page."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from ladder.models import Ladder
from seasons.models import Season
from seasons.selectors import badges_for, ladder_seasons

STANDINGS_PER_PAGE = 50


def season_list(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    return render(request, "seasons/list.html", {"ladder": ladder, "seasons": ladder_seasons(ladder)})


def season_detail(request: HttpRequest, slug: str, season_id: int) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    season = get_object_or_404(Season, ladder=ladder, pk=season_id)
    standings = season.standings.select_related("player").order_by("rank", "peak_rank", "pk")
    if season.is_closed:
        standings = standings.filter(rank__isnull=False)
    page = Paginator(standings, STANDINGS_PER_PAGE).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    badges = badges_for(season, [row.player_id for row in rows])
    for row in rows:
        row.badge = badges.get(row.player_id)
    page.object_list = rows
    return render(
        request,
        "seasons/detail.html",
        {"ladder": ladder, "season": season, "page": page, "rows": rows, "seasons": ladder_seasons(ladder)},
    )
