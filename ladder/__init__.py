"""The ladder project: settings, URLs, the Celery app, and the ladders-and-matches domain."""

from ladder.celery import app as celery_app

__all__ = ["celery_app"]
