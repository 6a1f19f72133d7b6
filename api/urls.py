"""``/api/v1/``: the versioned API, its OpenAPI schema and (outside the version) the docs."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularJSONAPIView

from api.views import ladders, matches, players

app_name = "api"

urlpatterns = [
    path("schema/", SpectacularJSONAPIView.as_view(), name="schema"),
    path("me/", players.MeView.as_view(), name="me"),
    path("ladders/", ladders.LadderListView.as_view(), name="ladders"),
    path("ladders/<slug:slug>/", ladders.LadderDetailView.as_view(), name="ladder"),
    path("ladders/<slug:slug>/leaderboard/", ladders.LeaderboardView.as_view(), name="leaderboard"),
    path("ladders/<slug:slug>/snapshots/", ladders.SnapshotListView.as_view(), name="snapshots"),
    path("ladders/<slug:slug>/snapshots/<str:date>/", ladders.SnapshotDetailView.as_view(), name="snapshot"),
    path("ladders/<slug:slug>/membership/", ladders.MembershipView.as_view(), name="membership"),
    path("ladders/<slug:slug>/win-probability/", ladders.WinProbabilityView.as_view(), name="win_probability"),
    path("ladders/<slug:slug>/queue/", ladders.QueueView.as_view(), name="queue"),
    path("players/<str:username>/", players.PlayerDetailView.as_view(), name="player"),
    path("players/<str:username>/matches/", players.PlayerMatchesView.as_view(), name="player_matches"),
    path(
        "players/<str:username>/ladders/<slug:slug>/history/",
        players.PlayerHistoryView.as_view(),
        name="player_history",
    ),
    path("matches/", matches.MatchListView.as_view(), name="matches"),
    path("matches/<int:pk>/", matches.MatchDetailView.as_view(), name="match"),
    path("matches/<int:pk>/result/", matches.MatchResultView.as_view(), name="match_result"),
    path("matches/<int:pk>/confirm/", matches.MatchConfirmView.as_view(), name="match_confirm"),
    path("matches/<int:pk>/dispute/", matches.MatchDisputeView.as_view(), name="match_dispute"),
    path("matches/<int:pk>/void/", matches.MatchVoidView.as_view(), name="match_void"),
    path("matches/<int:pk>/correct/", matches.MatchCorrectView.as_view(), name="match_correct"),
]
