"""Notifications in the admin: read-only, for a moderator answering "I was never told"."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from notifications.models import Notification
from notifications.texts import describe


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "recipient", "kind", "ladder", "match_number", "read_at", "email_status")
    list_filter = ("kind", "email_status", ("read_at", admin.EmptyFieldListFilter), "ladder")
    search_fields = ("recipient__username", "key")
    list_select_related = ("recipient", "ladder")
    date_hierarchy = "created_at"
    readonly_fields = ("text",)
    fields = (
        "recipient",
        "kind",
        "key",
        "ladder",
        "match",
        "text",
        "data",
        "created_at",
        "read_at",
        "email_status",
        "emailed_at",
    )
    show_full_result_count = False

    @admin.display(description="match", ordering="match_id")
    def match_number(self, notification: Notification) -> str:
        return f"#{notification.match_id}" if notification.match_id else "–"

    @admin.display(description="what the player reads")
    def text(self, notification: Notification) -> str:
        words = describe(notification)
        return f"{words.title}: {words.body}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Notification | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Notification | None = None) -> bool:
        return False
