"""API routes of tournaments (included by api/urls.py)."""

from __future__ import annotations

from django.urls import path

from api.views import tournaments

BASE = "ladders/<slug:slug>/tournaments/<slug:tournament>/"

urlpatterns = [
    path("ladders/<slug:slug>/tournaments/", tournaments.TournamentListView.as_view(), name="tournaments"),
    path(BASE, tournaments.TournamentDetailView.as_view(), name="tournament"),
    path(f"{BASE}pairings/", tournaments.PairingsView.as_view(), name="tournament_pairings"),
    path(f"{BASE}standings/", tournaments.StandingsView.as_view(), name="tournament_standings"),
    path(f"{BASE}entry/", tournaments.EntryView.as_view(), name="tournament_entry"),
    path(f"{BASE}entry/check-in/", tournaments.CheckInView.as_view(), name="tournament_check_in"),
    path(f"{BASE}entry/bye/", tournaments.ByeView.as_view(), name="tournament_bye"),
    path(f"{BASE}actions/", tournaments.ActionView.as_view(), name="tournament_actions"),
]
