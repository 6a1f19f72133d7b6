"""Pages of tournaments."""

from __future__ import annotations

from django.urls import path

from tournaments import views, views_points

app_name = "tournaments"

urlpatterns = [
    path("ladders/<slug:slug>/tournaments/", views.tournament_list, name="list"),
    # Before a tournament's own address, or "points" would be read as a tournament's slug.
    path("ladders/<slug:slug>/tournaments/points/", views_points.points_page, name="points"),
    path("ladders/<slug:slug>/tournaments/<slug:tournament>/", views.tournament_detail, name="detail"),
    path("ladders/<slug:slug>/tournaments/<slug:tournament>/live/", views.tournament_live, name="live"),
    path("ladders/<slug:slug>/tournaments/<slug:tournament>/register/", views.register, name="register"),
    path("ladders/<slug:slug>/tournaments/<slug:tournament>/check-in/", views.check_in, name="check_in"),
    path("ladders/<slug:slug>/tournaments/<slug:tournament>/withdraw/", views.withdraw, name="withdraw"),
    path("ladders/<slug:slug>/tournaments/<slug:tournament>/bye/", views.bye, name="bye"),
    path("ladders/<slug:slug>/tournaments/<slug:tournament>/bye/cancel/", views.bye_cancel, name="bye_cancel"),
    path("ladders/<slug:slug>/tournaments/<slug:tournament>/organise/", views.organise, name="organise"),
]
