"""API routes of stats (included by api/urls.py)."""

from __future__ import annotations

from django.urls import path

from api.views import stats

urlpatterns = [
    path("ladders/<slug:slug>/stats/", stats.LadderStatsView.as_view(), name="ladder_stats"),
    path("players/<username:a>/versus/<username:b>/", stats.VersusView.as_view(), name="players_versus"),
]
