"""The ``Idempotency-Key`` of a report: its response is stored once the report is written.

The report runs, and ``remember`` inserts the key's row with the response at the end of the
report's transaction: one write and no look-up before, for the usual request, whose key is
new. A retry runs the report again: it is refused as a duplicate of the game its first
request recorded, or written and then rolled back when the key's insert finds the row; either
way ``earlier`` then reads the first request's response and the retry replays it (or gets a
409 for another body). Two requests racing with one key serialise on the players' rows or on
the key's unique constraint (the second waits for the first to end), and the second answers
as a retry (``api.views.matches``). On PostgreSQL the insert is one prepared statement
(``api.sql``); elsewhere the ORM, with a savepoint around it (``api.store`` chooses). The
look-up, on the rare path of a retry, is the ORM's everywhere. Keys are remembered for
``API_IDEMPOTENCY_KEY_HOURS`` (24 by default); ``expire`` forgets older ones, every hour
from Celery beat. A retry after that is a new request; when it gives the game's
``played_at``, the report's duplicate check still refuses the same game twice.
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


def earlier(*, user: User, key: str) -> IdempotencyKey | None:
    """The user's earlier request with this key, with its request hash and response; else None
    (read after a keyed report failed or found its key taken)."""
    return IdempotencyKey.objects.filter(user=user, key=key).first()


def remember(*, user: User, key: str, request_hash: str, status: int, body: Any) -> bool:
    """Store the response of the key's request, inside its transaction, for retries to replay;
    False when another request with the key committed first (then roll this one back)."""
    text = json.dumps(body, cls=JSONEncoder)  # as the response was rendered: times in ISO 8601
    return store.idempotency_store(user=user, key=key, request_hash=request_hash, status=status, text=text)


def expire(*, now: datetime | None = None) -> int:
    """Forget the keys older than ``API_IDEMPOTENCY_KEY_HOURS``; how many were deleted."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.API_IDEMPOTENCY_KEY_HOURS)
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted
