from django.urls import include, path

from notifications import views

app_name = "notifications"

urlpatterns = [
    path("", views.notification_list, name="list"),
    path("read/", views.notification_read, name="read"),
    path("<int:pk>/open/", views.notification_open, name="open"),
    path("", include("notifications.mail_urls")),  # settings/ and unsubscribe/<token>/
]
