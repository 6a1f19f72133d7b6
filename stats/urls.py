"""Pages of stats."""

from __future__ import annotations

from django.urls import path

from stats import views

app_name = "stats"

urlpatterns = [
    path("ladders/<slug:slug>/stats/", views.ladder_stats, name="ladder"),
    path("ladders/<slug:slug>/versus/<str:a>/<str:b>/", views.versus, name="versus"),
]
