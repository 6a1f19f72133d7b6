"""Webhooks' writes: the deliveries an event makes, pausing, resuming and the test event.

The ladder's services call ``subscribed_events`` first and ``webhook_emit`` only for an
event some webhook wants, so a ladder without webhooks pays one cache read per event and
no SQL. ``webhook_emit`` writes its rows in the caller's transaction and posts nothing
before it commits: an event rolled back is never announced.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from webhooks.models import TEST_EVENT, DeliveryStatus, Format, Webhook, WebhookDelivery, new_secret
from webhooks.payloads import body_for

logger = logging.getLogger(__name__)

EVENTS_CACHE_SECONDS = 600  # a bound on staleness should an invalidation be lost with Redis
PAUSE_AFTER_FAILURES = 10
SWEEP_GRACE = timedelta(minutes=2)  # a delivery's own task normally runs well within this
ROTATION_GRACE = timedelta(hours=24)  # how long the previous secret still signs after a rotation
PAUSED_REASON = "Paused after {count} failed attempts in a row; the last: {error}"
TEST_SUMMARY = "Test event from {ladder}: this webhook works."


def _events_key(ladder_id: int) -> str:
    return f"webhooks:events:{ladder_id}"


def subscribed_events(ladder_id: int) -> frozenset[str]:
    """The events some active webhook of the ladder wants (cached; one cache read when warm)."""
    key = _events_key(ladder_id)
    cached = cache.get(key)
    if cached is not None:
        return frozenset(cached)
    events: set[str] = set()
    for wanted in Webhook.objects.filter(ladder_id=ladder_id, is_active=True).values_list("events", flat=True):
        events.update(wanted)
    cache.set(key, tuple(sorted(events)), EVENTS_CACHE_SECONDS)
    return frozenset(events)


def subscribed_events_forget(ladder_id: int) -> None:
    """Drop the cached events of the ladder now and again on commit, so a reader in between
    cannot cache what the transaction is changing."""
    key = _events_key(ladder_id)
    cache.delete(key)
    transaction.on_commit(lambda: cache.delete(key))


def site_url(path: str) -> str:
    """``path`` on the site as an absolute address (``SITE_URL``)."""
    if path.startswith(("http://", "https://")):
        return path
    base = str(getattr(settings, "SITE_URL", "http://127.0.0.1:8000")).rstrip("/")
    return f"{base}/{path.lstrip('/')}"


def webhook_emit(
    *, ladder_id: int, event: str, data: dict[str, Any], summary: str, url: str, now: datetime | None = None
) -> int:
    """One delivery per active webhook of the ladder subscribed to ``event``, posted after
    the caller's transaction commits; returns how many."""
    if event not in subscribed_events(ladder_id):
        return 0
    webhooks = [
        webhook
        for webhook in Webhook.objects.filter(ladder_id=ladder_id, is_active=True).select_related("ladder")
        if event in webhook.events
    ]
    return _deliveries_create(webhooks, event=event, data=data, summary=summary, url=url, now=now)


def _deliveries_create(
    webhooks: Iterable[Webhook], *, event: str, data: dict[str, Any], summary: str, url: str, now: datetime | None
) -> int:
    now = now or timezone.now()
    absolute = site_url(url)
    deliveries = []
    for webhook in webhooks:
        ladder = webhook.ladder
        delivery_id = uuid.uuid4()
        payload = body_for(
            format=webhook.format,
            delivery_id=str(delivery_id),
            event=event,
            ladder={"id": ladder.pk, "slug": ladder.slug, "name": ladder.name},
            occurred_at=now,
            summary=summary,
            url=absolute,
            data=data,
        )
        deliveries.append(
            WebhookDelivery(webhook=webhook, delivery_id=delivery_id, event=event, payload=payload, next_attempt_at=now)
        )
    if not deliveries:
        return 0
    created = WebhookDelivery.objects.bulk_create(deliveries)
    ids = [delivery.pk for delivery in created]
    transaction.on_commit(lambda: deliveries_enqueue(ids))
    return len(ids)


def deliveries_enqueue(ids: list[int]) -> None:
    """Hand the deliveries to Celery; if the broker is unreachable they stay pending and
    the sweep (``deliver_due_webhooks_task``) sends them, so the event's request never fails."""
    from webhooks.tasks import deliver_webhook_task

    try:
        for delivery_id in ids:
            deliver_webhook_task.delay(delivery_id)
    except Exception:  # the broker's errors are many (kombu, redis, OSError); none may fail a report
        logger.warning("could not enqueue %s webhook deliveries; the sweep will send them", len(ids), exc_info=True)


def webhook_send_test(*, webhook: Webhook, now: datetime | None = None) -> int:
    """A test delivery to one active webhook, whatever its events (the admin's action)."""
    if not webhook.is_active:
        return 0
    webhook = Webhook.objects.select_related("ladder").get(pk=webhook.pk)
    summary = TEST_SUMMARY.format(ladder=webhook.ladder.name)
    path = reverse("admin:webhooks_webhook_change", args=[webhook.pk])
    data = {"webhook": webhook.name}
    return _deliveries_create([webhook], event=TEST_EVENT, data=data, summary=summary, url=path, now=now)


def webhook_record_failure(*, webhook_id: int, error: str, now: datetime) -> bool:
    """Count one failed attempt; the tenth in a row pauses the webhook and tells the
    moderators. Returns whether this call paused it. Runs in the caller's transaction."""
    Webhook.objects.filter(pk=webhook_id).update(consecutive_failures=F("consecutive_failures") + 1)
    webhook = Webhook.objects.get(pk=webhook_id)
    if not webhook.is_active or webhook.consecutive_failures < PAUSE_AFTER_FAILURES:
        return False
    reason = PAUSED_REASON.format(count=webhook.consecutive_failures, error=error)[:300]
    # Only the update that finds it active pauses it, so moderators hear of it once.
    paused = Webhook.objects.filter(pk=webhook_id, is_active=True).update(
        is_active=False, paused_at=now, paused_reason=reason
    )
    if not paused:
        return False
    subscribed_events_forget(webhook.ladder_id)
    _tell_moderators(webhook, failures=webhook.consecutive_failures, error=error, paused_at=now)
    logger.warning("webhook %s of ladder %s paused: %s", webhook.pk, webhook.ladder_id, reason)
    return True


def _tell_moderators(webhook: Webhook, *, failures: int, error: str, paused_at: datetime) -> None:
    from accounts.roles import moderator_ids
    from notifications.services import notify

    notify(
        "webhook_paused",
        moderator_ids(),
        key=f"webhook:{webhook.pk}:{int(paused_at.timestamp())}",
        ladder_id=webhook.ladder_id,
        data={
            "webhook": webhook.name,
            "webhook_id": webhook.pk,
            "url": redacted(webhook.url),
            "failures": failures,
            "reason": error,
        },
        now=paused_at,
    )


def redacted(url: str) -> str:
    """The address without its path and query, which may hold a token (Discord's do)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/…" if parts.path not in ("", "/") or parts.query else url


def webhook_record_success(*, webhook_id: int) -> None:
    """A success ends a run of failures."""
    Webhook.objects.filter(pk=webhook_id, consecutive_failures__gt=0).update(consecutive_failures=0)


def webhook_resume(*, webhook: Webhook) -> bool:
    """Start a paused or switched-off webhook again, its failure count at zero."""
    resumed = Webhook.objects.filter(pk=webhook.pk, is_active=False).update(
        is_active=True, paused_at=None, paused_reason="", consecutive_failures=0
    )
    subscribed_events_forget(webhook.ladder_id)
    return bool(resumed)


def webhook_rotate_secret(*, webhook: Webhook, now: datetime | None = None) -> bool:
    """Give a JSON webhook a new signing secret; the old one still signs deliveries for
    ``ROTATION_GRACE``, so its bot can switch without refusing any. False for a Discord
    webhook, whose deliveries are not signed."""
    if webhook.format != Format.JSON:
        return False
    now = now or timezone.now()
    webhook.previous_secret, webhook.previous_secret_until = webhook.secret, now + ROTATION_GRACE
    webhook.secret = new_secret()
    webhook.save(update_fields=["secret", "previous_secret", "previous_secret_until"])
    return True


def deliveries_due(*, now: datetime, limit: int = 1000) -> list[int]:
    """Pending deliveries overdue by ``SWEEP_GRACE``, whose task is missing (the broker lost
    it, or the retry was too far off to hand a worker): their time is set to ``now``, so
    they are due for the task the sweep queues and no second sweep queues them again soon."""
    with transaction.atomic():
        ids = list(
            WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now - SWEEP_GRACE)
            .order_by("next_attempt_at")
            .select_for_update(skip_locked=True)
            .values_list("pk", flat=True)[:limit]
        )
        WebhookDelivery.objects.filter(pk__in=ids).update(next_attempt_at=now)
    return ids
