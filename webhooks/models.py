"""A ladder's webhooks and the log of every delivery to them.

A webhook tells a Discord channel or a community's own bot what happened on a ladder. A
delivery row is written in the same transaction as the event it reports, so an event
rolled back sends nothing; a Celery task then posts it and records every attempt.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import models

from webhooks.addresses import Private, Resolver, Unresolved, host_address, system_resolve


class Event(models.TextChoices):
    """What a webhook may subscribe to."""

    MATCH_RATED = "match.rated", "A match was confirmed and rated"
    DISPUTE_OPENED = "dispute.opened", "A result was disputed"
    NEW_LEADER = "leaderboard.new_leader", "A new #1 on the leaderboard"
    RANK_MILESTONE = "player.rank_milestone", "A player reached a rank milestone"
    TOURNAMENT_PAIRED = "tournament.paired", "A tournament round was paired"
    TOURNAMENT_RESULT = "tournament.result", "A tournament game has its result"
    TOURNAMENT_FINISHED = "tournament.finished", "A tournament ended: its final standings"


# Sent by the admin's "Send a test event" only: nobody subscribes to it.
TEST_EVENT = "webhook.test"


class Format(models.TextChoices):
    DISCORD = "discord", "Discord (message with an embed)"
    JSON = "json", "JSON, signed (for your own bot)"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


URL_NOT_HTTP = "Only http:// and https:// addresses can receive webhooks."
URL_NO_HOST = "The address has no host name."
URL_CREDENTIALS = (
    "Leave the user name and password out of the address: the JSON format signs every delivery instead "
    "(Discord's own webhook addresses carry their token in the path, which is fine)."
)
URL_PRIVATE = "This address is on a private or local network; webhooks only go to the public internet."
URL_NAME_PRIVATE = (
    "%(host)s resolves to %(address)s, an address on a private or local network; "
    "webhooks only go to the public internet."
)
URL_PORT = "The port must be a number from 0 to 65535."
EVENTS_NOT_LIST = "Choose the events as a list."
EVENTS_EMPTY = "Choose at least one event."
EVENTS_UNKNOWN = "Unknown event: %(event)s."


def allow_private_addresses() -> bool:
    """Whether webhooks may go to loopback and private networks (``WEBHOOK_ALLOW_PRIVATE_ADDRESSES``,
    off by default so a webhook cannot probe the server's own network)."""
    from django.conf import settings

    return bool(getattr(settings, "WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False))


def validate_webhook_url(value: str) -> None:
    """The model field's validator: ``webhook_url_check`` with the system's resolver."""
    webhook_url_check(value)


def webhook_url_check(value: str, *, resolve: Resolver = system_resolve) -> None:
    """http(s) only, a host, no credentials, and a host that is and resolves to public
    addresses only (``webhooks.addresses``). A name that does not resolve yet is accepted:
    each delivery resolves and checks it again, and connects to the address it checked."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https"):
        raise ValidationError(URL_NOT_HTTP, code="scheme")
    if not parts.hostname:
        raise ValidationError(URL_NO_HOST, code="host")
    if parts.username is not None or parts.password is not None:
        raise ValidationError(URL_CREDENTIALS, code="credentials")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ValidationError(URL_PORT, code="port") from None
    if allow_private_addresses():
        return
    try:
        host_address(parts.hostname, port, resolve=resolve)
    except Unresolved:
        return
    except Private as refused:
        if refused.literal:
            raise ValidationError(URL_PRIVATE, code="private") from None
        raise ValidationError(
            URL_NAME_PRIVATE, code="private", params={"host": parts.hostname, "address": refused.address}
        ) from None


def validate_events(value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(EVENTS_NOT_LIST, code="type")
    if not value:
        raise ValidationError(EVENTS_EMPTY, code="empty")
    for event in value:
        if event not in Event.values:
            raise ValidationError(EVENTS_UNKNOWN, code="unknown", params={"event": event})


def new_secret() -> str:
    return secrets.token_urlsafe(32)


class Webhook(models.Model):
    """Where a ladder's events go, in which format; paused after too many failures in a row."""

    ladder = models.ForeignKey(
        "ladder.Ladder",
        on_delete=models.CASCADE,
        related_name="webhooks",
        help_text="The ladder whose events this webhook receives.",
    )
    name = models.CharField(max_length=100, help_text="For you: which channel or bot this is, e.g. “#results”.")
    url = models.URLField(
        "address",
        max_length=500,
        validators=[validate_webhook_url],
        help_text="Where deliveries are posted (http:// or https://). For Discord: in the channel's settings, "
        "Integrations → Webhooks → New Webhook → Copy Webhook URL, and paste it here.",
    )
    events = models.JSONField(
        default=list,
        validators=[validate_events],
        help_text="Which events are sent. Each one is posted as it happens, after the change is saved.",
    )
    format = models.CharField(
        max_length=10,
        choices=Format,
        default=Format.DISCORD,
        help_text="Discord: a message with an embed, for a Discord channel's webhook address. JSON: the event as "
        "JSON, signed with this webhook's secret in the X-Ladder-Signature header, for your own bot.",
    )
    secret = models.CharField(
        max_length=64,
        default=new_secret,
        editable=False,
        help_text="Signs JSON deliveries (HMAC-SHA256 of “timestamp.body”). Keep it in your bot; unused by Discord.",
    )
    previous_secret = models.CharField(
        max_length=64,
        blank=True,
        editable=False,
        help_text="The secret before the last rotation: deliveries carry its signature too until "
        "previous_secret_until, so a bot can switch to the new one without missing any.",
    )
    previous_secret_until = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="Until when deliveries are also signed with the previous secret.",
    )
    is_active = models.BooleanField(
        "active",
        default=True,
        help_text="Untick to stop sending. A webhook paused after repeated failures is unticked; "
        "the “Resume” action starts it again.",
    )
    paused_at = models.DateTimeField(null=True, blank=True, help_text="When it was paused after repeated failures.")
    paused_reason = models.CharField(max_length=300, blank=True, help_text="Why it was paused.")
    consecutive_failures = models.PositiveIntegerField(
        default=0, help_text="Failed attempts in a row, across deliveries; a success resets it. Ten pause the webhook."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["ladder_id", "name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        from webhooks.services import subscribed_events_forget

        subscribed_events_forget(self.ladder_id)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        ladder_id = self.ladder_id
        result = super().delete(*args, **kwargs)
        from webhooks.services import subscribed_events_forget

        subscribed_events_forget(ladder_id)
        return result

    def previous_secret_signing(self, now: datetime) -> str:
        """The secret before the last rotation while it still signs deliveries (``CLAIM`` says the same in
        SQL), else ""."""
        until = self.previous_secret_until
        return self.previous_secret if until is not None and until > now else ""


class WebhookDelivery(models.Model):
    """One event posted to one webhook: the exact body, and how the latest attempt went.

    Append-only but for the attempt fields: ``payload`` never changes, so a retry sends
    the same bytes (and the same delivery id, for receivers that deduplicate).
    """

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    delivery_id = models.UUIDField(
        default=uuid.uuid4, unique=True, editable=False, help_text="Sent as X-Ladder-Delivery."
    )
    event = models.CharField(max_length=50)
    payload = models.TextField(help_text="The exact JSON body posted, byte for byte.")
    status = models.CharField(max_length=10, choices=DeliveryStatus, default=DeliveryStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_code = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The latest attempt's HTTP status."
    )
    error = models.CharField(max_length=300, blank=True, help_text="What went wrong in the latest attempt.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(
        null=True, blank=True, help_text="When a pending delivery is tried (again); none once it is settled."
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["webhook", "-created_at"], name="webhooks_delivery_log"),
            models.Index(
                fields=["next_attempt_at"],
                name="webhooks_delivery_due",
                condition=models.Q(status="pending"),
            ),
            # The failed ones, counted at each metrics scrape (monitoring/metrics.py); a delivery
            # enters it only when it fails, so it costs the write path nothing.
            models.Index(fields=["id"], name="webhooks_delivery_failed", condition=models.Q(status="failed")),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.webhook_id} ({self.status})"
