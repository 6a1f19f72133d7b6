"""Comments and evidence in the admin: read-only, for moderators to look at and remove.

Moderators hold view and delete on both (migration 0010): a comment or a link is never
edited, only read or, when it breaks the rules, deleted.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.models import Evidence, MatchComment


class _ReadOnly(admin.ModelAdmin):
    list_per_page = 50
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(MatchComment)
class MatchCommentAdmin(_ReadOnly):
    list_display = ("created_at", "match", "author", "excerpt")
    list_select_related = ("author", "match__ladder")
    list_filter = ("match__ladder",)
    search_fields = ("body", "author__username", "=match__id")
    fields = ("match", "author", "created_at", "body")
    readonly_fields = fields

    @admin.display(description="comment")
    def excerpt(self, obj: MatchComment) -> str:
        return obj.body if len(obj.body) <= 80 else f"{obj.body[:79]}…"

    def get_queryset(self, request: HttpRequest) -> QuerySet[MatchComment]:
        return super().get_queryset(request).select_related("author", "match__ladder")


@admin.register(Evidence)
class EvidenceAdmin(_ReadOnly):
    list_display = ("created_at", "match", "side_number", "added_by", "url")
    list_select_related = ("added_by", "side", "match__ladder")
    list_filter = ("match__ladder",)
    search_fields = ("url", "added_by__username", "=match__id")
    fields = ("match", "side_number", "added_by", "created_at", "url")
    readonly_fields = fields

    @admin.display(description="side")
    def side_number(self, obj: Evidence) -> int:
        return obj.side.index + 1
