"""Queuing a task costs a request at most one short timeout while the broker is away.

Publishing waits ``CELERY_BROKER_TIMEOUT`` (0.5 s) for Redis and does not try again
(``task_publish_retry`` off, the transport's ``max_retries`` 0): a stalled Redis accepts
connections and never answers, and Celery's own retries would hold a web process for
seconds per task, until every process of the site was waiting. After a failure the process
leaves the broker alone for ``CELERY_BROKER_RETRY_SECONDS`` (5 s), as the cache does
(``core.cache``): every task queued meanwhile fails at once with the broker's error.

What then happens to the work is the caller's choice, made where it queues: work a
periodic task sweeps up (notification mails, webhook deliveries) is queued with
``on_commit(..., robust=True)`` or a ``try``, so the request succeeds and the sweep does it
within a minute; what nothing sweeps up lets the error through, and the request answers 503
with ``Retry-After`` (``core.middleware``). Eager mode (the embedded default) never
publishes and is left alone.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import Task
from django.conf import settings
from kombu.exceptions import OperationalError as BrokerError

logger = logging.getLogger(__name__)


class _Breaker:
    """Whether this process tries the broker now; shared by the threads of a process."""

    def __init__(self) -> None:
        self._down_until = 0.0  # time.monotonic() before which the broker is not tried
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise the broker's error while the process leaves it alone."""
        left = self._down_until - time.monotonic()
        if left > 0:
            raise BrokerError(f"the broker did not answer; not tried again for {left:.1f} s")

    def failed(self, exc: Exception) -> None:
        seconds = settings.CELERY_BROKER_RETRY_SECONDS
        with self._lock:
            self._down_until = time.monotonic() + seconds
        logger.warning("Celery broker unavailable (%s): tasks not queued for %s s", exc, seconds)

    def reset(self) -> None:
        with self._lock:
            self._down_until = 0.0


breaker = _Breaker()


class BoundedPublishTask(Task[Any, Any]):
    """The project's task class (``config.celery``): ``apply_async`` fails fast while the broker is away."""

    def apply_async(self, *args: Any, **kwargs: Any) -> Any:
        if self.app.conf.task_always_eager:
            return super().apply_async(*args, **kwargs)
        breaker.check()
        try:
            return super().apply_async(*args, **kwargs)
        except BrokerError as exc:
            breaker.failed(exc)
            raise
