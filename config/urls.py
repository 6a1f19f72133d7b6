"""The site's root URLconf: each app's routes under its prefix, the admin, the API docs."""

from django.contrib import admin
from django.urls import include, path

from api import docs as api_docs
from api import web as api_web
from api.errors import site_not_found, site_server_error
from core.views import robots_txt
from ladder.pages import audit_trail as ladder_views_audit
from ladder.pages import header as ladder_header
from ladder.pages import help as ladder_views_help
from ladder.pages import moderation as ladder_views_moderation
from ladder.pages import views as ladder_views

urlpatterns = [
    path("", ladder_views.home, name="home"),
    path("robots.txt", robots_txt, name="robots_txt"),
    path("help/", ladder_views_help.help_page, name="help"),
    path("moderation/", ladder_views_moderation.desk, name="moderation"),
    path("moderation/audit/", ladder_views_audit.audit_trail, name="moderation_audit"),
    path("ladders/", include("ladder.urls")),
    path("", include("accounts.urls")),
    path("", include("matchmaking.urls")),
    path("", include("seasons.urls")),
    path("", include("stats.urls")),
    path("", include("tournaments.urls")),
    path("notifications/bell/", ladder_header.bell, name="header_counts"),
    path("notifications/", include("notifications.urls")),
    path("accounts/tokens/", api_web.tokens, name="api_tokens"),
    path("accounts/tokens/<int:pk>/revoke/", api_web.revoke, name="api_token_revoke"),
    path("accounts/settings/data.json", api_web.data_export, name="data_export"),
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
