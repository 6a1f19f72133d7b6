from django.urls import path

from matchmaking import views

app_name = "matchmaking"

urlpatterns = [
    path("ladders/<slug:slug>/queue/", views.queue_status, name="status"),
    path("ladders/<slug:slug>/queue/join/", views.queue_join, name="join"),
    path("ladders/<slug:slug>/queue/leave/", views.queue_leave, name="leave"),
]
