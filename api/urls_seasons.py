"""API routes of seasons (included by api/urls.py)."""

from __future__ import annotations

from django.urls import path

from api.views import seasons

urlpatterns = [
    path("ladders/<slug:slug>/seasons/", seasons.SeasonListView.as_view(), name="seasons"),
    path("ladders/<slug:slug>/seasons/<int:season_id>/", seasons.SeasonDetailView.as_view(), name="season"),
]
