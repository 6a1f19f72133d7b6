"""The site's URLs. The ladder domain's own routes are the ``ladder`` namespace below."""

from django.contrib import admin
from django.urls import include, path

from ladder import views

ladder_patterns = [
    path("<slug:slug>/", views.ladder_detail, name="detail"),
    path("<slug:slug>/join/", views.ladder_join, name="join"),
    path("<slug:slug>/leave/", views.ladder_leave, name="leave"),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("ladders/", include((ladder_patterns, "ladder"))),
    path("", include("accounts.urls")),
    path("admin/", admin.site.urls),
]

admin.site.site_header = "Ladder moderation"
admin.site.site_title = "Ladder moderation"
admin.site.index_title = "Moderate ladders, players and ratings"
