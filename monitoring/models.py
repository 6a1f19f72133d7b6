"""What the readiness probe reads about processes it cannot ask directly."""

from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker said it was alive (``monitoring.heartbeat``).

    One row per worker name, rewritten every ``HEARTBEAT_SECONDS`` by the worker's own
    consumer loop, so a row stops moving when the worker dies, hangs or loses the broker.
    ``/readyz`` reads the newest one; rows of workers gone for a week are deleted.
    """

    hostname = models.CharField(max_length=255, unique=True, help_text="The worker's name (celery@host).")
    seen_at = models.DateTimeField()

    class Meta:
        verbose_name = "worker heartbeat"

    def __str__(self) -> str:
        return f"{self.hostname} at {self.seen_at:%Y-%m-%d %H:%M:%S}"
