"""Deliveries posted to a real HTTP server on loopback: signature, bodies, retries, pausing, redirects, timeouts."""

from __future__ import annotations

import json
import re
import socket
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from accounts.roles import moderator_ids
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from notifications.models import Notification
from tests.factories import member
from webhooks import delivery
from webhooks.delivery import NOT_SENT_INACTIVE, delivery_attempt
from webhooks.models import DeliveryStatus, Webhook, WebhookDelivery
from webhooks.payloads import CONTENT_MAX, FIELDS_MAX
from webhooks.services import (
    PAUSE_AFTER_FAILURES,
    subscribed_events,
    webhook_emit,
    webhook_resume,
    webhook_rotate_secret,
)
from webhooks.tasks import deliver_webhook_task

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def emit(ladder, event: str = "match.rated", *, data: dict | None = None, summary: str = "alice beat bob") -> list:
    count = webhook_emit(
        ladder_id=ladder.pk, event=event, data=data or {"match": 7}, summary=summary, url="/matches/7/", now=T0
    )
    return list(WebhookDelivery.objects.order_by("pk"))[-count:] if count else []


def _documented_verify():
    """The check docs/operations.md gives a bot, run as written there (its code block, executed)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    block = re.search(r"```python\n(import hashlib, hmac, time\n.*?)```", text, re.DOTALL)
    assert block is not None, "docs/operations.md lost its verify example"
    namespace: dict = {}
    exec(block.group(1), namespace)  # our own documentation's example
    return namespace["verify"]


verify = _documented_verify()


def test_json_delivery_is_signed_with_the_webhooks_secret(ladder, json_hook, receiver, sql_or_orm):
    [sent] = emit(ladder)

    assert delivery_attempt(delivery_id=sent.pk, now=T0).status == DeliveryStatus.DELIVERED

    [got] = receiver.received
    assert got.path == "/bot"
    assert got.body == sent.payload.encode()
    assert verify(json_hook.secret, got.headers["X-Ladder-Signature"], got.body)
    assert not verify("another secret", got.headers["X-Ladder-Signature"], got.body)
    assert not verify(json_hook.secret, got.headers["X-Ladder-Signature"], got.body + b" ")
    body = json.loads(got.body)
    assert got.headers["X-Ladder-Event"] == body["event"] == "match.rated"
    assert got.headers["X-Ladder-Delivery"] == body["id"] == str(sent.delivery_id)
    assert body["ladder"] == {"id": ladder.pk, "slug": "chess", "name": "Chess"}
    assert body["url"].startswith("http") and body["url"].endswith("/matches/7/")
    assert body["data"] == {"match": 7} and body["summary"] == "alice beat bob"
    sent.refresh_from_db()
    assert (sent.status, sent.attempts, sent.response_code, sent.delivered_at) == ("delivered", 1, 204, T0)


def test_discord_body_has_content_and_an_embed_within_discords_limits(ladder, discord_hook, receiver):
    data = {f"field_{n}": n for n in range(40)} | {"sides": [{"players": ["alice"]}]}
    [sent] = emit(ladder, data=data, summary="@everyone " + "x" * 3000)

    delivery_attempt(delivery_id=sent.pk, now=T0)

    [got] = receiver.received
    assert "X-Ladder-Signature" not in got.headers
    body = json.loads(got.body)
    assert set(body) == {"content", "embeds", "allowed_mentions"}
    assert len(body["content"]) == CONTENT_MAX and body["content"].endswith("…")
    assert body["allowed_mentions"] == {"parse": []}
    [embed] = body["embeds"]
    assert embed["title"] == "Match rated" and embed["url"].endswith("/matches/7/")
    assert embed["timestamp"] == T0.isoformat()
    assert len(embed["fields"]) == FIELDS_MAX
    assert embed["fields"][0] == {"name": "Field 0", "value": "0", "inline": True}
    assert "Sides" not in {field["name"] for field in embed["fields"]}


MARKUP = set("\\*_~`|>#-[]()<@:+")
PUNCTUATION_ESCAPE = r"\\([!-/:-@\[-`{-~])"  # a backslash, then an ASCII punctuation mark


def discord_shows(text: str) -> str:
    """What Discord displays for ``text`` once its escapes are read: a backslash before a
    punctuation mark shows the mark itself (Discord's markdown, like CommonMark)."""
    return re.sub(PUNCTUATION_ESCAPE, r"\1", text)


def unescaped_markup(text: str) -> set[str]:
    """The markup characters of ``text`` that no backslash escapes."""
    return set(re.sub(PUNCTUATION_ESCAPE, "", text)) & MARKUP


def test_a_disputes_reason_and_names_reach_discord_as_plain_text(ladder, receiver, player):
    Webhook.objects.create(ladder=ladder, name="#results", url=receiver.url("/discord"), events=["dispute.opened"])
    rival = member(ladder, "__rival__")
    reason = (
        "[free nitro](https://evil.example/login) @everyone <@123456> <#42> <t:0:R>\n"
        "# You lost\n-# subtext\n> quoted\n1. first\n```py\ncode\n``` **bold** ||spoiler|| ~~gone~~ :skull: \\o/"
    )
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([rival], 2)])
    svc.match_dispute(match=match, user=rival, reason=reason)
    [sent] = WebhookDelivery.objects.filter(event="dispute.opened")

    delivery_attempt(delivery_id=sent.pk, now=timezone.now())

    [got] = receiver.received
    body = json.loads(got.body)
    assert body["allowed_mentions"] == {"parse": []}
    content = body["content"]
    assert discord_shows(content) == f"Chess: __rival__ disputed match {match.pk} ({reason})"
    assert unescaped_markup(content) == set()
    assert not re.search(r"^\s*\d+\.", content, re.MULTILINE)  # no ordered list either
    fields = {field["name"]: field["value"] for field in body["embeds"][0]["fields"]}
    assert discord_shows(fields["Reason"]) == reason and unescaped_markup(fields["Reason"]) == set()
    assert discord_shows(fields["By"]) == "__rival__" and unescaped_markup(fields["By"]) == set()


def test_a_cut_discord_text_keeps_no_half_escape(ladder, discord_hook, receiver):
    [sent] = emit(ladder, summary="a" + "*" * 3000)

    delivery_attempt(delivery_id=sent.pk, now=T0)

    content = json.loads(receiver.received[0].body)["content"]
    assert len(content) <= CONTENT_MAX and content.endswith("…")
    assert unescaped_markup(content[:-1]) == set() and not content[:-1].endswith("\\")


def test_a_500_is_retried_after_its_backoff_then_delivered(ladder, json_hook, receiver, sql_or_orm):
    receiver.answer(500)
    [sent] = emit(ladder)

    first = delivery_attempt(delivery_id=sent.pk, now=T0)
    sent.refresh_from_db()
    assert first.status == DeliveryStatus.PENDING and first.retry_at == T0 + timedelta(seconds=30)
    assert (sent.attempts, sent.response_code, sent.error) == (1, 500, "HTTP 500: answer 500")
    assert sent.next_attempt_at == T0 + timedelta(seconds=30)

    early = delivery_attempt(delivery_id=sent.pk, now=T0 + timedelta(seconds=10))
    assert early.status == "skipped" and len(receiver.received) == 1

    second = delivery_attempt(delivery_id=sent.pk, now=first.retry_at)
    sent.refresh_from_db()
    json_hook.refresh_from_db()
    assert second.status == DeliveryStatus.DELIVERED and len(receiver.received) == 2
    assert (sent.attempts, sent.response_code, sent.error, sent.next_attempt_at) == (2, 204, "", None)
    assert receiver.received[0].body == receiver.received[1].body  # the same bytes, the same delivery id
    assert json_hook.consecutive_failures == 0


def test_backoff_doubles_and_the_eighth_failure_gives_up(ladder, json_hook, receiver):
    receiver.answer(*[503] * 8)
    [sent] = emit(ladder)
    now, waits = T0, []
    for _ in range(8):
        attempt = delivery_attempt(delivery_id=sent.pk, now=now)
        if attempt.retry_at is None:
            break
        waits.append((attempt.retry_at - now).total_seconds())
        now = attempt.retry_at

    sent.refresh_from_db()
    assert waits == [30, 60, 120, 240, 480, 960, 1920]
    assert (sent.status, sent.attempts, sent.next_attempt_at) == ("failed", 8, None)
    assert delivery_attempt(delivery_id=sent.pk, now=now + timedelta(days=1)).status == "skipped"


def test_ten_failures_in_a_row_pause_the_webhook_and_tell_the_moderators(
    ladder, json_hook, receiver, moderator, root, sql_or_orm
):
    receiver.answer(*[500] * 20)
    deliveries = emit(ladder) + emit(ladder, "dispute.opened")
    now = T0
    for attempt_number in range(PAUSE_AFTER_FAILURES):
        sent = deliveries[attempt_number % 2]
        delivery_attempt(delivery_id=sent.pk, now=now)
        json_hook.refresh_from_db()
        assert json_hook.is_active == (attempt_number < PAUSE_AFTER_FAILURES - 1)
        now += timedelta(hours=2)

    assert json_hook.paused_at == now - timedelta(hours=2)
    assert json_hook.consecutive_failures == PAUSE_AFTER_FAILURES
    assert "10 failed attempts in a row" in json_hook.paused_reason and "HTTP 500" in json_hook.paused_reason
    told = Notification.objects.filter(kind="webhook_paused")
    assert sorted(told.values_list("recipient_id", flat=True)) == moderator_ids() == sorted([moderator.pk, root.pk])
    assert told.first().data["webhook"] == "bot" and told.first().ladder_id == ladder.pk
    assert subscribed_events(ladder.pk) == frozenset()

    # A paused webhook is not posted to: its pending delivery is settled unsent.
    for pending in WebhookDelivery.objects.filter(webhook=json_hook, status=DeliveryStatus.PENDING):
        assert delivery_attempt(delivery_id=pending.pk, now=now).status == DeliveryStatus.FAILED
        pending.refresh_from_db()
        assert pending.error == NOT_SENT_INACTIVE
    assert len(receiver.received) == PAUSE_AFTER_FAILURES
    assert emit(ladder) == []

    assert webhook_resume(webhook=json_hook)
    json_hook.refresh_from_db()
    assert (json_hook.is_active, json_hook.paused_at, json_hook.consecutive_failures) == (True, None, 0)
    assert "match.rated" in subscribed_events(ladder.pk)


def test_a_redirect_is_not_followed(ladder, json_hook, receiver):
    receiver.answer(302, headers={"Location": receiver.url("/elsewhere")})
    [sent] = emit(ladder)

    attempt = delivery_attempt(delivery_id=sent.pk, now=T0)

    assert [got.path for got in receiver.received] == ["/bot"]
    sent.refresh_from_db()
    assert attempt.status == DeliveryStatus.PENDING
    assert sent.response_code == 302
    assert sent.error == f"HTTP 302: redirect to {receiver.url('/elsewhere')} not followed."


def test_an_answers_body_arriving_after_its_headers_is_read(ladder, json_hook, receiver):
    receiver.answer(500)
    receiver.body_delay = 0.2  # HTTP/1.0: http.client closes the connection once the headers are in
    [sent] = emit(ladder)

    delivery_attempt(delivery_id=sent.pk, now=T0)

    sent.refresh_from_db()
    assert sent.error == "HTTP 500: answer 500"


def test_a_429_waits_at_least_its_retry_after(ladder, json_hook, receiver):
    receiver.answer(429, headers={"Retry-After": "600"})
    [sent] = emit(ladder)

    assert delivery_attempt(delivery_id=sent.pk, now=T0).retry_at == T0 + timedelta(seconds=600)


def test_loopback_is_refused_unless_allowed(ladder, json_hook, receiver, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    Webhook.objects.filter(pk=json_hook.pk).update(url=receiver.url("/bot").replace("127.0.0.1", "localhost"))
    [sent] = emit(ladder)

    delivery_attempt(delivery_id=sent.pk, now=T0)

    sent.refresh_from_db()
    assert receiver.received == []
    assert sent.error == "Refused: localhost resolves to a private or local address."
    assert sent.response_code is None and sent.status == DeliveryStatus.PENDING


def test_a_server_trickling_its_answer_is_cut_off_at_the_total_timeout(ladder, json_hook, receiver, monkeypatch):
    monkeypatch.setattr(delivery, "TOTAL_TIMEOUT", 1.0)
    receiver.trickle_seconds = 0.2  # the status line alone would take 7 s, each byte well within a read timeout
    [sent] = emit(ladder)

    started = time.monotonic()
    delivery_attempt(delivery_id=sent.pk, now=T0)

    assert time.monotonic() - started < 2.5
    sent.refresh_from_db()
    assert sent.error.startswith("No answer within 1 s") and sent.response_code is None


def test_a_refused_connection_is_a_failure(ladder, json_hook, receiver):
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    Webhook.objects.filter(pk=json_hook.pk).update(url=f"http://127.0.0.1:{port}/bot")
    [sent] = emit(ladder)

    delivery_attempt(delivery_id=sent.pk, now=T0)

    sent.refresh_from_db()
    assert sent.error.startswith("ConnectionRefusedError") and sent.status == DeliveryStatus.PENDING


def test_the_task_delivers_and_a_second_run_sends_nothing(ladder, json_hook, receiver, celery_eager):
    [sent] = emit(ladder)
    WebhookDelivery.objects.filter(pk=sent.pk).update(next_attempt_at=timezone.now())

    assert deliver_webhook_task.delay(sent.pk).get() == DeliveryStatus.DELIVERED
    assert deliver_webhook_task.delay(sent.pk).get() == "skipped"
    assert len(receiver.received) == 1


def test_a_rotated_secret_signs_beside_the_new_one_for_a_day(ladder, json_hook, receiver, sql_or_orm):
    old = json_hook.secret
    assert webhook_rotate_secret(webhook=json_hook, now=T0)
    json_hook.refresh_from_db()
    assert json_hook.secret != old and json_hook.previous_secret == old

    [first] = emit(ladder)
    assert delivery_attempt(delivery_id=first.pk, now=T0 + timedelta(hours=23)).status == DeliveryStatus.DELIVERED
    [got] = receiver.received
    header = got.headers["X-Ladder-Signature"]
    assert header.count("v1=") == 2
    assert verify(json_hook.secret, header, got.body) and verify(old, header, got.body)  # a bot with either works
    assert not verify("another secret", header, got.body)

    [second] = emit(ladder)
    assert delivery_attempt(delivery_id=second.pk, now=T0 + timedelta(hours=25)).status == DeliveryStatus.DELIVERED
    header = receiver.received[1].headers["X-Ladder-Signature"]
    assert header.count("v1=") == 1  # a day on, only the new secret signs
    assert verify(json_hook.secret, header, receiver.received[1].body)
    assert not verify(old, header, receiver.received[1].body)


def test_a_discord_webhook_has_no_secret_to_rotate(discord_hook):
    before = discord_hook.secret

    assert not webhook_rotate_secret(webhook=discord_hook, now=T0)

    discord_hook.refresh_from_db()
    assert (discord_hook.secret, discord_hook.previous_secret) == (before, "")
