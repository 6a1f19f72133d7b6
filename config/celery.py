"""The Celery application, configured from Django settings (``CELERY_*`` names).

With no ``CELERY_BROKER_URL`` the settings turn on eager mode, so tasks run in-process
and the site needs no broker (the embedded default).
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("ladder")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
