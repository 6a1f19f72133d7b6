"""Moderators' webhook admin: who may use it, what the form refuses, the actions, the read-only log."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from tests.factories import UserFactory
from webhooks.models import (
    EVENTS_EMPTY,
    TEST_EVENT,
    URL_CREDENTIALS,
    URL_NOT_HTTP,
    URL_PORT,
    URL_PRIVATE,
    Format,
    Webhook,
    WebhookDelivery,
    validate_events,
    validate_webhook_url,
)

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:webhooks_webhook_changelist")
ADD = reverse("admin:webhooks_webhook_add")
LOG = reverse("admin:webhooks_webhookdelivery_changelist")


def form(ladder, **fields) -> dict:
    return {
        "ladder": ladder.pk,
        "name": "#results",
        "url": "https://discord.com/api/webhooks/1/token",
        "format": Format.DISCORD,
        "events": ["match.rated", "dispute.opened"],
        "is_active": "on",
        **fields,
    }


def test_a_moderator_adds_a_discord_webhook(moderator_client, ladder):
    assert moderator_client.get(ADD).status_code == 200

    response = moderator_client.post(ADD, form(ladder))

    assert response.status_code == 302, response.context["adminform"].form.errors
    webhook = Webhook.objects.get()
    assert (webhook.ladder, webhook.events, webhook.format) == (ladder, ["match.rated", "dispute.opened"], "discord")
    assert len(webhook.secret) >= 40


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.org/hook", URL_NOT_HTTP),
        ("https://bot:hunter2@example.org/hook", URL_CREDENTIALS),
        ("http://10.0.0.7/hook", URL_PRIVATE),
        ("http://[::1]:8080/hook", URL_PRIVATE),
        ("http://[64:ff9b::a00:7]/hook", URL_PRIVATE),  # NAT64 of 10.0.0.7
        ("http://[2002:a00:7::1]/hook", URL_PRIVATE),  # 6to4 of 10.0.0.7
        ("http://[::a00:7]/hook", URL_PRIVATE),  # IPv4-compatible 10.0.0.7
        ("http://[::ffff:127.0.0.1]/hook", URL_PRIVATE),  # IPv4-mapped loopback
        ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook", URL_PRIVATE),  # Teredo
        ("http://[fec0::1]/hook", URL_PRIVATE),  # site-local
        ("http://localhost:8080/hook", "localhost resolves to "),  # /etc/hosts: loopback
        ("http://example.org:99999/hook", URL_PORT),
        ("javascript:alert(1)", "Enter a valid URL."),
    ],
)
def test_the_form_refuses_an_address_that_is_not_public_http(moderator_client, ladder, url, message):
    response = moderator_client.post(ADD, form(ladder, url=url))

    assert response.status_code == 200
    assert any(message in error for error in response.context["adminform"].form.errors["url"])
    assert not Webhook.objects.exists()


def test_the_form_refuses_no_event_and_unknown_events(moderator_client, ladder):
    response = moderator_client.post(ADD, form(ladder, events=[]))
    assert "events" in response.context["adminform"].form.errors

    response = moderator_client.post(ADD, form(ladder, events=["season.started"]))
    assert "events" in response.context["adminform"].form.errors
    assert not Webhook.objects.exists()


def test_model_validation_says_what_is_wrong():
    with pytest.raises(ValidationError, match="Only http"):
        validate_webhook_url("file:///etc/passwd")
    validate_webhook_url("https://example.org/hook")
    with pytest.raises(ValidationError) as refused:
        validate_events([])
    assert refused.value.messages == [EVENTS_EMPTY]
    with pytest.raises(ValidationError, match="Unknown event: match.rate."):
        validate_events(["match.rate"])
    with pytest.raises(ValidationError, match="as a list"):
        validate_events("match.rated")


def test_outsiders_and_staff_without_moderation_are_kept_out(client, outsider, ladder):
    client.force_login(outsider)
    assert client.get(CHANGELIST).status_code == 302  # to the admin's login

    client.force_login(UserFactory(username="clerk", is_staff=True))
    assert client.get(CHANGELIST).status_code == 403
    assert client.get(LOG).status_code == 403
    assert client.post(ADD, form(ladder)).status_code == 403
    assert not Webhook.objects.exists()


def test_the_list_and_the_page_show_state_secret_and_latest_deliveries(moderator_client, ladder):
    webhook = Webhook.objects.create(
        ladder=ladder, name="bot", url="https://example.org/hook", format=Format.JSON, events=["match.rated"]
    )
    WebhookDelivery.objects.create(
        webhook=webhook, event="match.rated", payload="{}", status="failed", error="HTTP 500."
    )

    listing = moderator_client.get(CHANGELIST).content.decode()
    assert "bot" in listing and "match.rated" in listing and "failed" in listing

    page = moderator_client.get(reverse("admin:webhooks_webhook_change", args=[webhook.pk])).content.decode()
    assert webhook.secret in page and "X-Ladder-Signature" in page
    assert "HTTP 500." in page and f"{LOG}?webhook__id__exact={webhook.pk}" in page


def test_send_a_test_event_and_resume(moderator_client, ladder):
    active = Webhook.objects.create(ladder=ladder, name="on", url="https://example.org/a", events=["match.rated"])
    paused = Webhook.objects.create(
        ladder=ladder, name="off", url="https://example.org/b", events=["match.rated"], is_active=False,
        consecutive_failures=10, paused_reason="Paused after 10 failed attempts in a row",
    )  # fmt: skip
    ids = [str(active.pk), str(paused.pk)]

    moderator_client.post(CHANGELIST, {"action": "send_test_event", "_selected_action": ids})

    [test] = WebhookDelivery.objects.all()
    assert (test.webhook, test.event) == (active, TEST_EVENT)
    assert "Test event from Chess" in test.payload

    moderator_client.post(CHANGELIST, {"action": "resume", "_selected_action": [str(paused.pk)]})

    paused.refresh_from_db()
    assert (paused.is_active, paused.consecutive_failures, paused.paused_reason) == (True, 0, "")


def test_rotate_the_signing_secret(moderator_client, ladder):
    bot = Webhook.objects.create(
        ladder=ladder, name="bot", url="https://example.org/a", events=["match.rated"], format="json"
    )
    channel = Webhook.objects.create(
        ladder=ladder, name="#results", url="https://example.org/b", events=["match.rated"]
    )
    old = bot.secret

    response = moderator_client.post(
        CHANGELIST, {"action": "rotate_secret", "_selected_action": [str(bot.pk), str(channel.pk)]}, follow=True
    )

    bot.refresh_from_db()
    assert bot.secret != old and bot.previous_secret == old and bot.previous_secret_until > timezone.now()
    text = response.content.decode()
    assert "New signing secret for bot" in text and "1 Discord webhook(s) skipped" in text
    page = moderator_client.get(reverse("admin:webhooks_webhook_change", args=[bot.pk])).content.decode()
    assert bot.secret in page and old not in page  # the old secret is not shown again
    assert "also signed with the previous secret until" in page


def test_the_delivery_log_is_read_only(moderator_client, ladder):
    webhook = Webhook.objects.create(ladder=ladder, name="bot", url="https://example.org/hook", events=["match.rated"])
    delivery = WebhookDelivery.objects.create(webhook=webhook, event="match.rated", payload='{"content":"hi"}')
    page = reverse("admin:webhooks_webhookdelivery_change", args=[delivery.pk])

    assert moderator_client.get(LOG).status_code == 200
    response = moderator_client.get(page)
    assert response.status_code == 200 and "&quot;content&quot;: &quot;hi&quot;" in response.content.decode()
    assert moderator_client.post(page, {"event": "x"}).status_code == 403
    assert moderator_client.get(reverse("admin:webhooks_webhookdelivery_add")).status_code == 403
