"""The webhooks app's seam to the database: each statement in its PostgreSQL and its ORM form.

Each function here is one statement and chooses, in one place, between its hand-written
SQL (PostgreSQL) and its ORM twin (other databases: ``make run``'s SQLite), through
``core.db.on_postgresql()``; callers never ask which database they are on. The tests run
both sides (``core.db.orm_twins()`` makes PostgreSQL take the twins).

Claiming a delivery to post it: a worker posts deliveries one after another, so each
round trip to the database is a share of its rate. Claiming a delivery (only if still
pending and due) and loading it with its webhook is one statement on PostgreSQL, a
data-modifying CTE, instead of an UPDATE and a SELECT.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F

from core import db
from webhooks.models import DeliveryStatus, WebhookDelivery

CLAIM = """
WITH claimed AS (
    UPDATE webhooks_webhookdelivery
       SET attempts = attempts + 1, last_attempt_at = %s, next_attempt_at = %s
     WHERE id = %s AND status = 'pending' AND next_attempt_at <= %s
 RETURNING id, delivery_id, event, payload, attempts, webhook_id
)
SELECT claimed.id, claimed.delivery_id, claimed.event, claimed.payload, claimed.attempts, claimed.webhook_id,
       webhook.url, webhook.secret, webhook.format, webhook.is_active, webhook.consecutive_failures,
       CASE WHEN webhook.previous_secret_until > %s THEN webhook.previous_secret ELSE '' END
  FROM claimed JOIN webhooks_webhook AS webhook ON webhook.id = claimed.webhook_id
"""


@dataclass(frozen=True, slots=True)
class Claimed:
    """A delivery claimed for one attempt (``attempts`` counts it), with what posting it needs."""

    pk: int
    delivery_id: uuid.UUID
    event: str
    payload: str
    attempts: int
    webhook_id: int
    url: str
    secret: str
    format: str
    is_active: bool
    consecutive_failures: int  # the webhook's, as the claim found it
    previous_secret: str  # the secret before a rotation, while it still signs ("" otherwise)


def delivery_claim(*, delivery_id: int, now: datetime, lease_until: datetime) -> Claimed | None:
    """The delivery, if it was pending and due; its time moves to ``lease_until`` meanwhile."""
    if db.on_postgresql():
        with db.prepared_cursor() as cursor:
            cursor.execute(CLAIM, [now, lease_until, delivery_id, now, now])
            row = cursor.fetchone()
        return None if row is None else Claimed(*row)
    claimed = WebhookDelivery.objects.filter(
        pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now
    ).update(attempts=F("attempts") + 1, last_attempt_at=now, next_attempt_at=lease_until)
    if not claimed:
        return None
    delivery = WebhookDelivery.objects.select_related("webhook").get(pk=delivery_id)
    webhook = delivery.webhook
    return Claimed(
        delivery.pk,
        delivery.delivery_id,
        delivery.event,
        delivery.payload,
        delivery.attempts,
        webhook.pk,
        webhook.url,
        webhook.secret,
        webhook.format,
        webhook.is_active,
        webhook.consecutive_failures,
        webhook.previous_secret_signing(now),
    )
