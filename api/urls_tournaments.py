"""API routes of tournaments (included by api/urls.py)."""

from __future__ import annotations

from django.urls import path

from api.views import tournaments
from core.replica import replica_reads

BASE = "ladders/<slug:slug>/tournaments/<slug:tournament>/"

urlpatterns = [
    path(
        "ladders/<slug:slug>/tournaments/", replica_reads(tournaments.TournamentListView.as_view()), name="tournaments"
    ),
    path(BASE, replica_reads(tournaments.TournamentDetailView.as_view()), name="tournament"),
    path(f"{BASE}pairings/", replica_reads(tournaments.PairingsView.as_view()), name="tournament_pairings"),
    path(f"{BASE}standings/", replica_reads(tournaments.StandingsView.as_view()), name="tournament_standings"),
    path(f"{BASE}entry/", tournaments.EntryView.as_view(), name="tournament_entry"),
    path(f"{BASE}entry/check-in/", tournaments.CheckInView.as_view(), name="tournament_check_in"),
    path(f"{BASE}entry/bye/", tournaments.ByeView.as_view(), name="tournament_bye"),
    path(f"{BASE}actions/", tournaments.ActionView.as_view(), name="tournament_actions"),
]
