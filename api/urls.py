"""``/api/v1/``: the versioned API, its OpenAPI schema and (outside the version) the docs."""

from __future__ import annotations

from django.urls import include, path, register_converter

from api.views import (
    comments,
    jobs,
    ladders,
    lifecycle,
    matches,
    notifications,
    parties,
    players,
    queue,
    schema,
    series,
)
from core.replica import replica_reads

app_name = "api"


class UsernameConverter:
    """Usernames are letters of any script, digits, "_" and "-" (``accounts.validators``), at most
    30 characters; a longer or slashed one is a 404, as is any name nobody has."""

    regex = r"[^/]{1,30}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class DateConverter(UsernameConverter):
    regex = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"


register_converter(UsernameConverter, "username")
register_converter(DateConverter, "isodate")

# ``replica_reads``: with a read replica (core/replica.py), the GETs of the public reads (ladders,
# leaderboards, players, matches, seasons, statistics, tournaments) may be served by it. What a
# client reads of its own state (me, membership, the queue, parties, notifications, replay jobs)
# is read from the primary, as is every write.
urlpatterns = [
    path("", include("api.urls_seasons")),
    path("", include("api.urls_stats")),
    path("", include("api.urls_tournaments")),
    path("schema/", schema.SchemaView.as_view(), name="schema"),
    path("me/", players.MeView.as_view(), name="me"),
    path("me/export/", players.MeExportView.as_view(), name="me_export"),
    path("me/fair-play/", players.MeFairPlayView.as_view(), name="me_fair_play"),
    path("ladders/", replica_reads(ladders.LadderListView.as_view()), name="ladders"),
    path("ladders/<slug:slug>/", replica_reads(ladders.LadderDetailView.as_view()), name="ladder"),
    path("ladders/<slug:slug>/leaderboard/", replica_reads(ladders.LeaderboardView.as_view()), name="leaderboard"),
    path("ladders/<slug:slug>/snapshots/", replica_reads(ladders.SnapshotListView.as_view()), name="snapshots"),
    path(
        "ladders/<slug:slug>/snapshots/<isodate:date>/",
        replica_reads(ladders.SnapshotDetailView.as_view()),
        name="snapshot",
    ),
    path("ladders/<slug:slug>/membership/", ladders.MembershipView.as_view(), name="membership"),
    path(
        "ladders/<slug:slug>/win-probability/",
        replica_reads(ladders.WinProbabilityView.as_view()),
        name="win_probability",
    ),
    path("ladders/<slug:slug>/queue/", queue.QueueView.as_view(), name="queue"),
    path("ladders/<slug:slug>/party/", parties.PartyView.as_view(), name="party"),
    path("ladders/<slug:slug>/party/leave/", parties.PartyLeaveView.as_view(), name="party_leave"),
    path("ladders/<slug:slug>/party/invitations/", parties.PartyInvitationsView.as_view(), name="party_invitations"),
    path(
        "ladders/<slug:slug>/party/invitations/<username:username>/",
        parties.PartyWithdrawView.as_view(),
        name="party_withdraw",
    ),
    path(
        "ladders/<slug:slug>/party/invitations/<int:party_id>/accept/",
        parties.PartyAcceptView.as_view(),
        name="party_accept",
    ),
    path(
        "ladders/<slug:slug>/party/invitations/<int:party_id>/decline/",
        parties.PartyDeclineView.as_view(),
        name="party_decline",
    ),
    path("players/<username:username>/", replica_reads(players.PlayerDetailView.as_view()), name="player"),
    path(
        "players/<username:username>/matches/",
        replica_reads(players.PlayerMatchesView.as_view()),
        name="player_matches",
    ),
    path(
        "players/<username:username>/ladders/<slug:slug>/history/",
        replica_reads(players.PlayerHistoryView.as_view()),
        name="player_history",
    ),
    path("matches/", replica_reads(matches.MatchListView.as_view()), name="matches"),
    path("matches/dispute-all/", matches.MatchDisputeAllView.as_view(), name="match_dispute_all"),
    path("matches/<int:pk>/", replica_reads(matches.MatchDetailView.as_view()), name="match"),
    path("matches/<int:pk>/result/", matches.MatchResultView.as_view(), name="match_result"),
    path("matches/<int:pk>/confirm/", matches.MatchConfirmView.as_view(), name="match_confirm"),
    path("matches/<int:pk>/dispute/", matches.MatchDisputeView.as_view(), name="match_dispute"),
    path("matches/<int:pk>/void/", matches.MatchVoidView.as_view(), name="match_void"),
    path("matches/<int:pk>/correct/", matches.MatchCorrectView.as_view(), name="match_correct"),
    path("matches/<int:pk>/ready/", lifecycle.MatchReadyView.as_view(), name="match_ready"),
    path("matches/<int:pk>/cancel/", lifecycle.MatchCancelView.as_view(), name="match_cancel"),
    path("matches/<int:pk>/no-show/", lifecycle.MatchNoShowView.as_view(), name="match_no_show"),
    path("matches/<int:pk>/no-show/answer/", lifecycle.MatchNoShowAnswerView.as_view(), name="match_no_show_answer"),
    path("matches/<int:pk>/games/", replica_reads(series.MatchGamesView.as_view()), name="match_games"),
    path("matches/<int:pk>/comments/", replica_reads(comments.MatchCommentsView.as_view()), name="match_comments"),
    path("matches/<int:pk>/evidence/", replica_reads(comments.MatchEvidenceView.as_view()), name="match_evidence"),
    path("notifications/", notifications.NotificationListView.as_view(), name="notifications"),
    path("notifications/read/", notifications.NotificationReadView.as_view(), name="notifications_read"),
    path("replay-jobs/<int:pk>/", jobs.ReplayJobDetailView.as_view(), name="replay_job"),
]
