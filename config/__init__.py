"""The Django project: settings, the root URLconf, the Celery app, WSGI and ASGI.

No rule of the game lives here; the apps (``ladder``, ``ratings``, ``matchmaking``,
``accounts``, ``api``) hold the domain and ``core`` the infrastructure they share.
"""

from config.celery import app as celery_app

__all__ = ["celery_app"]
