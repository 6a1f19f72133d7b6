"""The site's URLs. The ladder domain's own routes are the ``ladder`` namespace below."""

from django.contrib import admin
from django.urls import include, path

from ladder import views

ladder_patterns = [
    path("matches/awaiting/", views.matches_awaiting, name="awaiting"),
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

urlpatterns = [
    path("", views.home, name="home"),
    path("ladders/", include((ladder_patterns, "ladder"))),
    path("", include("accounts.urls")),
    path("", include("matchmaking.urls")),
    path("admin/", admin.site.urls),
]

admin.site.site_header = "Ladder moderation"
admin.site.site_title = "Ladder moderation"
admin.site.index_title = "Moderate ladders, players and ratings"
