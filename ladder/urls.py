"""The ladder domain's pages: ladders, their players, and matches (the ``ladder`` namespace)."""

from django.urls import path

from ladder import views

app_name = "ladder"

urlpatterns = [
    path("matches/awaiting/", views.matches_awaiting, name="awaiting"),
    path("matches/awaiting/dispute-all/", views.matches_dispute_all, name="dispute_all"),
    path("matches/<int:pk>/", views.match_detail, name="match"),
    path("matches/<int:pk>/result/", views.match_result, name="match_result"),
    path("matches/<int:pk>/confirm/", views.match_confirm, name="match_confirm"),
    path("matches/<int:pk>/dispute/", views.match_dispute, name="match_dispute"),
    path("<slug:slug>/", views.ladder_detail, name="detail"),
    path("<slug:slug>/join/", views.ladder_join, name="join"),
    path("<slug:slug>/leave/", views.ladder_leave, name="leave"),
    path("<slug:slug>/report/", views.match_report, name="report"),
    path("<slug:slug>/report/side/", views.match_report_side, name="report_side"),
    path("<slug:slug>/players/<str:username>/", views.player_in_ladder, name="player"),
]
