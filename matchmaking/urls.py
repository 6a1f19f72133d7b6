from django.urls import path

from matchmaking import views, views_match, views_party

app_name = "matchmaking"

urlpatterns = [
    path("ladders/<slug:slug>/queue/", views.queue_status, name="status"),
    path("ladders/<slug:slug>/queue/join/", views.queue_join, name="join"),
    path("ladders/<slug:slug>/queue/leave/", views.queue_leave, name="leave"),
    path("ladders/<slug:slug>/party/", views_party.party_status, name="party_status"),
    path("ladders/<slug:slug>/party/invite/", views_party.party_invite, name="party_invite"),
    path("ladders/<slug:slug>/party/<int:party>/answer/", views_party.party_answer, name="party_answer"),
    path("ladders/<slug:slug>/party/leave/", views_party.party_leave, name="party_leave"),
    path("ladders/<slug:slug>/party/withdraw/", views_party.party_withdraw, name="party_withdraw"),
    path("ladders/matches/<int:pk>/ready/", views_match.ready, name="ready"),
    path("ladders/matches/<int:pk>/cancel/", views_match.cancel, name="cancel"),
    path("ladders/matches/<int:pk>/no-show/", views_match.no_show, name="no_show"),
    path("ladders/matches/<int:pk>/no-show/answer/", views_match.no_show_answer, name="no_show_answer"),
    path("ladders/matches/<int:pk>/lifecycle/", views_match.match_lifecycle, name="match_lifecycle"),
]
