"""Pages of stats."""

from __future__ import annotations

from django.urls import path

from core.replica import replica_reads
from stats import views

app_name = "stats"

urlpatterns = [
    path("ladders/<slug:slug>/stats/", replica_reads(views.ladder_stats), name="ladder"),
    path("ladders/<slug:slug>/versus/<str:a>/<str:b>/", replica_reads(views.versus), name="versus"),
]
