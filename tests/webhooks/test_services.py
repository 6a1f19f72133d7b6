"""The webhook services: the cached event set, emitting in the caller's transaction, the sweep."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction

from tests.factories import LadderFactory
from webhooks.models import DeliveryStatus, Format, Webhook, WebhookDelivery
from webhooks.services import (
    SWEEP_GRACE,
    deliveries_due,
    subscribed_events,
    webhook_emit,
    webhook_record_failure,
    webhook_resume,
)

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def emit(ladder, event: str = "match.rated", **fields) -> int:
    return webhook_emit(ladder_id=ladder.pk, event=event, data={"match": 1}, summary="s", url="/m/1/", **fields)


def hook(ladder, events: list[str], **fields) -> Webhook:
    fields = {"name": "hook", "url": "https://example.org/hook", "format": Format.JSON, **fields}
    return Webhook.objects.create(ladder=ladder, events=events, **fields)


def test_a_ladder_without_webhooks_costs_no_sql_once_cached(ladder, django_assert_num_queries):
    with django_assert_num_queries(1):
        assert subscribed_events(ladder.pk) == frozenset()

    with django_assert_num_queries(0):
        assert subscribed_events(ladder.pk) == frozenset()
        assert emit(ladder) == 0


def test_subscribed_events_are_those_of_active_webhooks(ladder, django_assert_num_queries):
    hook(ladder, ["match.rated"])
    hook(ladder, ["dispute.opened", "match.rated"])
    hook(ladder, ["leaderboard.new_leader"], is_active=False)
    hook(LadderFactory(name="Go", slug="go"), ["player.rank_milestone"])

    assert subscribed_events(ladder.pk) == {"match.rated", "dispute.opened"}
    with django_assert_num_queries(0):
        assert subscribed_events(ladder.pk) == {"match.rated", "dispute.opened"}


def test_saving_deleting_pausing_and_resuming_a_webhook_refresh_the_cached_events(ladder):
    assert subscribed_events(ladder.pk) == frozenset()
    first = hook(ladder, ["match.rated"])
    assert subscribed_events(ladder.pk) == {"match.rated"}

    first.events = ["dispute.opened"]
    first.save()
    assert subscribed_events(ladder.pk) == {"dispute.opened"}

    for _ in range(10):
        webhook_record_failure(webhook_id=first.pk, error="HTTP 500.", now=T0)
    assert subscribed_events(ladder.pk) == frozenset()

    webhook_resume(webhook=first)
    assert subscribed_events(ladder.pk) == {"dispute.opened"}

    first.delete()
    assert subscribed_events(ladder.pk) == frozenset()


def test_emit_writes_one_delivery_per_subscribed_active_webhook(ladder):
    wants = hook(ladder, ["match.rated"], name="wants")
    hook(ladder, ["dispute.opened"], name="other event")
    hook(ladder, ["match.rated"], name="switched off", is_active=False)

    assert emit(ladder, now=T0) == 1

    [sent] = WebhookDelivery.objects.all()
    assert (sent.webhook, sent.event, sent.status, sent.attempts, sent.next_attempt_at) == (
        wants,
        "match.rated",
        DeliveryStatus.PENDING,
        0,
        T0,
    )


def test_emit_in_a_rolled_back_transaction_sends_nothing(
    ladder, json_hook, receiver, celery_eager, django_capture_on_commit_callbacks
):
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        assert emit(ladder) == 1
        raise RuntimeError("the report failed")

    assert WebhookDelivery.objects.count() == 0
    assert callbacks == [] and receiver.received == []


def test_emit_that_commits_is_posted_by_the_task(
    ladder, json_hook, receiver, celery_eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        assert emit(ladder) == 1

    assert [got.path for got in receiver.received] == ["/bot"]
    assert WebhookDelivery.objects.get().status == DeliveryStatus.DELIVERED


def test_the_sweep_takes_overdue_deliveries_once(ladder):
    webhook = hook(ladder, ["match.rated"])
    emit(ladder, now=T0)
    emit(ladder, now=T0 + timedelta(minutes=5))
    overdue, recent = WebhookDelivery.objects.order_by("pk")

    now = T0 + SWEEP_GRACE + timedelta(minutes=1)
    assert deliveries_due(now=now) == [overdue.pk]
    assert deliveries_due(now=now + timedelta(seconds=30)) == []  # its time moved to `now`
    overdue.refresh_from_db()
    assert overdue.next_attempt_at == now
    assert webhook.deliveries.count() == 2 and recent.next_attempt_at == T0 + timedelta(minutes=5)
