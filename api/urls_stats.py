"""API routes of stats (included by api/urls.py)."""

from __future__ import annotations

from django.urls import path

from api.views import stats
from core.replica import replica_reads

urlpatterns = [
    path("ladders/<slug:slug>/stats/", replica_reads(stats.LadderStatsView.as_view()), name="ladder_stats"),
    path("players/<username:a>/versus/<username:b>/", replica_reads(stats.VersusView.as_view()), name="players_versus"),
]
