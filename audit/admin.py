"""The trail in the admin: read-only, filterable; and the bulk deletion that records what it deleted."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin import actions as admin_actions
from django.contrib.admin.models import LogEntry
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from audit.models import AuditEntry
from audit.services import log_entries_record
from core.admin import ReadOnlyAdmin


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("at", "actor_name", "action", "subject_name", "ladder", "target", "reason")
    list_filter = ("action", "ladder", ("at", admin.DateFieldListFilter))
    search_fields = ("actor_name", "subject_name", "target", "reason")
    date_hierarchy = "at"
    list_select_related = ("ladder",)
    readonly_fields = [field.name for field in AuditEntry._meta.fields]


@admin.action(permissions=["delete"], description="Delete selected %(verbose_name_plural)s")
def delete_selected(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Any]
) -> TemplateResponse | None:
    """Django's bulk deletion, whose log entries of several objects bypass ``LogEntry``'s save signal."""
    newest = LogEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    response = admin_actions.delete_selected(modeladmin, request, queryset)
    log_entries_record(LogEntry.objects.filter(pk__gt=newest, user_id=request.user.pk or 0).select_related("user"))
    return response


admin.site.add_action(delete_selected, "delete_selected")
