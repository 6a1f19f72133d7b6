"""Moderators' webhooks: add one to a ladder, send it a test event, resume it, read its log.

Moderators hold ``ladder.change_match`` (``accounts.roles.MODERATE``), not webhooks' own
model permissions, so these admins ask for that: whoever moderates the matches looks
after where their results are announced. The delivery log is read-only.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import CHANGE, LogEntry
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from accounts.roles import MODERATE
from audit.services import log_entries_record
from webhooks.models import Event, Format, Webhook, WebhookDelivery
from webhooks.services import webhook_resume, webhook_rotate_secret, webhook_send_test

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec

RECENT_DELIVERIES = 20


def may_moderate(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.has_perm(MODERATE))


class ModeratorsOnly:
    """Every admin permission is the moderators' one."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return may_moderate(request)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return may_moderate(request)

    def has_add_permission(self, request: HttpRequest, *args: object) -> bool:
        return may_moderate(request)

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return may_moderate(request)

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return may_moderate(request)


class WebhookForm(forms.ModelForm):
    url = forms.URLField(
        label="Address",
        max_length=500,
        assume_scheme="https",
        help_text=Webhook._meta.get_field("url").help_text,
        widget=forms.URLInput(attrs={"size": 80}),
    )
    events = forms.MultipleChoiceField(
        choices=Event.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text=Webhook._meta.get_field("events").help_text,
    )

    class Meta:
        model = Webhook
        fields = ("ladder", "name", "url", "format", "events", "is_active")


@admin.register(Webhook)
class WebhookAdmin(ModeratorsOnly, admin.ModelAdmin):
    form = WebhookForm
    list_display = ("name", "ladder", "event_list", "format", "state", "consecutive_failures", "last_delivery")
    list_filter = ("ladder", "format", "is_active")
    list_select_related = ("ladder",)
    search_fields = ("name", "ladder__name")
    readonly_fields = ("signing_secret", "paused_at", "paused_reason", "consecutive_failures", "created_at", "recent")
    actions = ("send_test_event", "resume", "rotate_secret")
    fieldsets = (
        (None, {"fields": ("ladder", "name", "url", "format", "events", "is_active")}),
        ("Signing (JSON format)", {"fields": ("signing_secret",)}),
        ("Health", {"fields": ("consecutive_failures", "paused_at", "paused_reason", "created_at")}),
        ("Latest deliveries", {"fields": ("recent",)}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Webhook]:
        newest = WebhookDelivery.objects.filter(webhook=OuterRef("pk")).order_by("-created_at", "-id")
        return (
            super()
            .get_queryset(request)
            .annotate(
                _last_at=Subquery(newest.values("created_at")[:1]),
                _last_status=Subquery(newest.values("status")[:1]),
            )
        )

    def get_fieldsets(self, request: HttpRequest, obj: Webhook | None = None) -> _FieldsetSpec:
        return self.fieldsets[:1] if obj is None else self.fieldsets  # the rest exists once saved

    @admin.display(description="events")
    def event_list(self, obj: Webhook) -> str:
        return ", ".join(obj.events)

    @admin.display(description="state", ordering="is_active")
    def state(self, obj: Webhook) -> str:
        if obj.is_active:
            return "active"
        return "paused after failures" if obj.paused_at else "switched off"

    @admin.display(description="last delivery")
    def last_delivery(self, obj: Webhook) -> str:
        last_at = getattr(obj, "_last_at", None)
        if last_at is None:
            return "none yet"
        return f"{last_at:%Y-%m-%d %H:%M} UTC, {obj._last_status}"  # type: ignore[attr-defined]

    @admin.display(description="secret")
    def signing_secret(self, obj: Webhook) -> str:
        if obj.format != Format.JSON:
            return "Not used: Discord deliveries are not signed (the webhook address is the secret)."
        shown = format_html(
            "<code>{}</code><br>Your bot checks each delivery's X-Ladder-Signature header with this secret "
            "(see the operations guide). Anyone with it can forge deliveries: keep it private. If it leaks, "
            "use the action “Rotate the signing secret”.",
            obj.secret,
        )
        if obj.previous_secret_signing(timezone.now()):
            shown += format_html(
                "<br>Rotated: deliveries are also signed with the previous secret until {} UTC, so your bot "
                "keeps accepting them while you give it the new one.",
                f"{obj.previous_secret_until:%Y-%m-%d %H:%M}",  # set whenever the previous secret signs
            )
        return shown

    @admin.display(description=f"last {RECENT_DELIVERIES}")
    def recent(self, obj: Webhook) -> str:
        rows = obj.deliveries.order_by("-created_at", "-id")[:RECENT_DELIVERIES]
        log = reverse("admin:webhooks_webhookdelivery_changelist") + f"?webhook__id__exact={obj.pk}"
        if not rows:
            return "No deliveries yet."
        body = format_html_join(
            "",
            "<tr><td><a href='{}'>{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    reverse("admin:webhooks_webhookdelivery_change", args=[row.pk]),
                    f"{row.created_at:%Y-%m-%d %H:%M:%S}",
                    row.event,
                    row.get_status_display(),
                    row.attempts,
                    row.response_code or "–",
                    row.error or "–",
                )
                for row in rows
            ),
        )
        return format_html(
            "<table><caption>Newest first; times in UTC. <a href='{}'>The whole log</a>.</caption><thead><tr>"
            "<th scope='col'>created</th><th scope='col'>event</th><th scope='col'>status</th>"
            "<th scope='col'>attempts</th><th scope='col'>response</th><th scope='col'>error</th>"
            "</tr></thead><tbody>{}</tbody></table>",
            log,
            body,
        )

    @admin.action(description="Send a test event", permissions=["change"])
    def send_test_event(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        sent = sum(webhook_send_test(webhook=webhook) for webhook in queryset)
        skipped = queryset.count() - sent
        if sent:
            self.message_user(request, f"Queued a test event to {sent} webhook(s); see their latest deliveries.")
        if skipped:
            self.message_user(request, f"{skipped} inactive webhook(s) skipped: resume them first.", messages.WARNING)

    @admin.action(
        description="Rotate the signing secret (the old one still signs for 24 hours)", permissions=["change"]
    )
    def rotate_secret(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        rotated = [webhook for webhook in queryset if webhook_rotate_secret(webhook=webhook)]
        skipped = queryset.count() - len(rotated)
        _logged(request, rotated, "Rotated the signing secret.")
        if rotated:
            names = ", ".join(webhook.name for webhook in rotated)
            self.message_user(
                request,
                f"New signing secret for {names}: it is on each webhook's page. Deliveries carry the old "
                "secret's signature too for 24 hours: give your bot the new one before then.",
            )
        if skipped:
            self.message_user(
                request, f"{skipped} Discord webhook(s) skipped: their deliveries are not signed.", messages.WARNING
            )

    @admin.action(description="Resume (reset the failure count and send again)", permissions=["change"])
    def resume(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        resumed = [webhook for webhook in queryset if webhook_resume(webhook=webhook)]
        _logged(request, resumed, "Resumed: failure count reset.")
        self.message_user(request, f"Resumed {len(resumed)} webhook(s).")


def _logged(request: HttpRequest, webhooks: list[Webhook], message: str) -> None:
    """An action's change in each webhook's admin history, and so in the audit trail."""
    if webhooks:
        assert request.user.pk is not None  # the admin's actions run for a signed-in moderator
        entries = LogEntry.objects.log_actions(
            user_id=request.user.pk, queryset=webhooks, action_flag=CHANGE, change_message=message
        )
        log_entries_record(entries)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ModeratorsOnly, admin.ModelAdmin):
    """The delivery log, newest first: read-only."""

    list_display = ("created_at", "webhook", "event", "status", "attempts", "response_code", "error", "last_attempt_at")
    list_filter = ("status", "event", "webhook")
    list_select_related = ("webhook",)
    ordering = ("-created_at", "-id")
    fields = (
        "webhook",
        "delivery_id",
        "event",
        "status",
        "attempts",
        "response_code",
        "error",
        "created_at",
        "last_attempt_at",
        "next_attempt_at",
        "delivered_at",
        "body",
    )
    readonly_fields = fields

    @admin.display(description="body posted")
    def body(self, obj: WebhookDelivery) -> str:
        try:
            shown = json.dumps(json.loads(obj.payload), indent=2, ensure_ascii=False)
        except ValueError:
            shown = obj.payload
        return format_html("<pre>{}</pre>", shown)

    def has_add_permission(self, request: HttpRequest, *args: object) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
