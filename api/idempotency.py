"""The ``Idempotency-Key`` of a report: claim the key, then store the response it got.

Both run inside the report's transaction. ``claim`` inserts the key's row first; a
concurrent request with the same key waits on the unique constraint until the first one
commits (then it finds that row and replays its response) or rolls back (then it goes on
as the first). On PostgreSQL the claim is one prepared ``INSERT … ON CONFLICT DO NOTHING``
and storing the response one prepared ``UPDATE`` (``api.sql``); elsewhere it is the ORM, with a savepoint
around the insert (``api.store`` chooses). Keys are remembered for ``API_IDEMPOTENCY_KEY_HOURS`` (24 by default);
``expire`` forgets older ones, every hour from Celery beat. A retry after that is a new
request; when it gives the game's ``played_at``, the report's duplicate check still
refuses the same game twice.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework.utils.encoders import JSONEncoder

from accounts.models import User
from api import store
from api.models import IdempotencyKey


def claim(*, user: User, key: str, request_hash: str) -> int | IdempotencyKey:
    """The new row's id if this request is the key's first; else the row of the request that
    used it first, with its response and request hash."""
    return store.idempotency_claim(user=user, key=key, request_hash=request_hash)


def settle(record_id: int, *, status: int, body: Any) -> None:
    """Store the response of the claimed key's request, for its retries to replay."""
    text = json.dumps(body, cls=JSONEncoder)  # as the response was rendered: times in ISO 8601
    store.idempotency_settle(record_id, status=status, text=text)


def expire(*, now: datetime | None = None) -> int:
    """Forget the keys older than ``API_IDEMPOTENCY_KEY_HOURS``; how many were deleted."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.API_IDEMPOTENCY_KEY_HOURS)
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted
