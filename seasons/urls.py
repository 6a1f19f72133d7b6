"""Pages of seasons."""

from __future__ import annotations

from django.urls import path

from seasons import views

app_name = "seasons"

urlpatterns = [
    path("ladders/<slug:slug>/seasons/", views.season_list, name="list"),
    path("ladders/<slug:slug>/seasons/<int:season_id>/", views.season_detail, name="detail"),
]
