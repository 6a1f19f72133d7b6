"""Notifications in the admin: read-only, for a moderator answering "I was never told".

The *Mail trouble* filter counts the mails that failed and those waiting to be tried again,
so a mail server that refuses or stays away shows at a glance; the action sends failed
mails again.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from notifications.mail import mails_retry
from notifications.models import EmailStatus, Notification
from notifications.texts import describe

RETRIED = "%(count)s failed mails queued to be sent again."

FAILED = Q(email_status=EmailStatus.FAILED)
RETRYING = Q(email_status__in=[EmailStatus.QUEUED, EmailStatus.DIGEST], email_attempts__gt=0)


class MailTroubleFilter(admin.SimpleListFilter):
    title = "mail trouble"
    parameter_name = "mail_trouble"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        failed = Notification.objects.filter(FAILED).count()
        retrying = Notification.objects.filter(RETRYING).count()
        return [("failed", f"Failed ({failed})"), ("retrying", f"To be tried again ({retrying})")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Notification]) -> QuerySet[Notification]:
        if self.value() == "failed":
            return queryset.filter(FAILED)
        if self.value() == "retrying":
            return queryset.filter(RETRYING)
        return queryset


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = (
        "created_at",
        "recipient",
        "kind",
        "ladder",
        "match_number",
        "read_at",
        "email_status",
        "mail_error",
    )
    list_filter = (MailTroubleFilter, "kind", "email_status", ("read_at", admin.EmptyFieldListFilter), "ladder")
    actions = ("retry_mail",)
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
        "email_attempts",
        "email_retry_at",
        "email_error",
    )
    show_full_result_count = False

    @admin.display(description="the mail server said", ordering="email_error")
    def mail_error(self, notification: Notification) -> str:
        return notification.email_error or "–"

    @admin.action(description="Send the failed mails again")
    def retry_mail(self, request: HttpRequest, queryset: QuerySet[Notification]) -> None:
        count = mails_retry(ids=queryset.values_list("pk", flat=True))
        self.message_user(request, RETRIED % {"count": count}, messages.SUCCESS)

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
