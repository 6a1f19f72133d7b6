from django.urls import path

from matchmaking import views, views_match

app_name = "matchmaking"

urlpatterns = [
    path("ladders/<slug:slug>/queue/", views.queue_status, name="status"),
    path("ladders/<slug:slug>/queue/join/", views.queue_join, name="join"),
    path("ladders/<slug:slug>/queue/leave/", views.queue_leave, name="leave"),
    path("ladders/matches/<int:pk>/ready/", views_match.ready, name="ready"),
    path("ladders/matches/<int:pk>/cancel/", views_match.cancel, name="cancel"),
    path("ladders/matches/<int:pk>/no-show/", views_match.no_show, name="no_show"),
    path("ladders/matches/<int:pk>/no-show/answer/", views_match.no_show_answer, name="no_show_answer"),
    path("ladders/matches/<int:pk>/lifecycle/", views_match.match_lifecycle, name="match_lifecycle"),
]
