"""The page of a ladder's tournament points across events (docs/rules.md §22)."""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from ladder.models import Ladder
from tournaments import ranking


@require_GET
def points_page(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    now = timezone.now()
    constants = ranking.points_settings(ladder)
    return render(
        request,
        "tournaments/points.html",
        {
            "ladder": ladder,
            "rows": ranking.points_table(ladder, now),
            "constants": constants,
            "second_share": 100 * 2**-constants.rank_power,
            "tenth_share": 100 * 10**-constants.rank_power,
            "half_life": constants.decay_days * math.log(2),
        },
    )
