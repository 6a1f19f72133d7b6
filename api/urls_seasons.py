"""API routes of seasons (included by api/urls.py)."""

from __future__ import annotations

from django.urls import path

from api.views import seasons
from core.replica import replica_reads

urlpatterns = [
    path("ladders/<slug:slug>/seasons/", replica_reads(seasons.SeasonListView.as_view()), name="seasons"),
    path(
        "ladders/<slug:slug>/seasons/<int:season_id>/", replica_reads(seasons.SeasonDetailView.as_view()), name="season"
    ),
]
