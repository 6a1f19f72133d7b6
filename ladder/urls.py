"""The site's URLs. The ladder domain's own routes are the ``ladder`` namespace below."""

from django.contrib import admin
from django.urls import include, path

from api import docs as api_docs
from api import web as api_web
from api.errors import site_not_found, site_server_error
from ladder import views

ladder_patterns = [
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

urlpatterns = [
    path("", views.home, name="home"),
    path("ladders/", include((ladder_patterns, "ladder"))),
    path("", include("accounts.urls")),
    path("", include("matchmaking.urls")),
    path("accounts/tokens/", api_web.tokens, name="api_tokens"),
    path("accounts/tokens/<int:pk>/revoke/", api_web.revoke, name="api_token_revoke"),
    path("api/v1/", include("api.urls")),
    path("api/docs/", api_docs.SwaggerView.as_view(url_name="api:schema"), name="api_docs"),
    path("api/docs/redoc/", api_docs.RedocView.as_view(url_name="api:schema"), name="api_redoc"),
    path("admin/", admin.site.urls),
]

# JSON errors under /api/, the site's pages elsewhere.
handler404 = site_not_found
handler500 = site_server_error

admin.site.site_header = "Ladder moderation"
admin.site.site_title = "Ladder moderation"
admin.site.index_title = "Moderate ladders, players and ratings"
