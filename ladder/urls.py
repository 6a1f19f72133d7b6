"""The ladder domain's pages: ladders, their players, and matches (the ``ladder`` namespace)."""

from django.urls import path

from core.replica import replica_reads
from ladder.pages import conversation as views_conversation
from ladder.pages import fields_edit as views_fields_edit
from ladder.pages import ladders as views_ladders
from ladder.pages import marks as views_marks
from ladder.pages import matches as views_matches
from ladder.pages import moderation as views_moderation
from ladder.pages import reports as views_reports
from ladder.pages import series as views_series
from ladder.pages import views

app_name = "ladder"

urlpatterns = [
    path("", views_ladders.ladder_list, name="list"),
    path("matches/awaiting/", views.matches_awaiting, name="awaiting"),
    path("matches/awaiting/dispute-all/", views.matches_dispute_all, name="dispute_all"),
    path("matches/<int:pk>/", views.match_detail, name="match"),
    path("matches/<int:pk>/result/", views.match_result, name="match_result"),
    path("matches/<int:pk>/games/", views_series.series_game, name="series_game"),
    path("matches/<int:pk>/confirm/", views.match_confirm, name="match_confirm"),
    path("matches/<int:pk>/dispute/", views.match_dispute, name="match_dispute"),
    path("matches/<int:pk>/comments/", views_conversation.comment_post, name="match_comment"),
    path("matches/<int:pk>/evidence/", views_conversation.evidence_post, name="match_evidence"),
    path("matches/<int:pk>/void/", views_moderation.match_void, name="match_void"),
    path("matches/<int:pk>/correct/", views_moderation.match_correct, name="match_correct"),
    path("matches/<int:pk>/details/", views_fields_edit.match_fields_edit, name="match_fields_edit"),
    path(
        "matches/<int:pk>/moderate-confirm/",
        views_moderation.match_moderate_confirm,
        name="match_moderate_confirm",
    ),
    path("<slug:slug>/", replica_reads(views.ladder_detail), name="detail"),
    path("<slug:slug>/join/", views.ladder_join, name="join"),
    path("<slug:slug>/leave/", views_ladders.ladder_leave, name="leave"),
    path("<slug:slug>/matches/", views_matches.ladder_matches, name="matches"),
    path("<slug:slug>/report/", views.match_report, name="report"),
    path("<slug:slug>/report/side/", views.match_report_side, name="report_side"),
    path("<slug:slug>/players/<str:username>/", views.player_in_ladder, name="player"),
    path("<slug:slug>/players/<str:username>/report/", views_reports.player_report, name="player_report"),
    path("<slug:slug>/players/<str:username>/reports/", views_reports.report_case, name="report_case"),
    path("<slug:slug>/players/<str:username>/refund/", views_reports.refund, name="refund"),
    path("<slug:slug>/players/<str:username>/void-since/", views_reports.void_since, name="void_since"),
    path("<slug:slug>/players/<str:username>/mark/", views_marks.mark_add, name="mark_add"),
    path("<slug:slug>/players/<str:username>/mark/lift/", views_marks.mark_lift, name="mark_lift"),
]
