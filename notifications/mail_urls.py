"""The mail pages, included by ``notifications/urls.py`` under ``/notifications/`` (its
``notifications`` namespace): ``notifications:preferences`` and ``notifications:unsubscribe``."""

from django.urls import path

from notifications import mail_views

urlpatterns = [
    path("settings/", mail_views.mail_settings, name="preferences"),
    path("unsubscribe/<str:token>/", mail_views.unsubscribe, name="unsubscribe"),
]
