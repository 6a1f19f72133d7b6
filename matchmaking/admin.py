from __future__ import annotations

from django.contrib import admin

from matchmaking.models import Block, QueueEntry


@admin.register(QueueEntry)
class QueueEntryAdmin(admin.ModelAdmin):
    list_display = ("player", "ladder", "status", "rating", "joined_at", "last_seen_at", "opponent", "match")
    list_filter = ("ladder", "status")
    list_select_related = ("player", "ladder", "opponent")
    search_fields = ("player__username",)
    readonly_fields = [field.name for field in QueueEntry._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(Block)
class BlockAdmin(admin.ModelAdmin):
    list_display = ("blocker", "blocked", "created_at")
    search_fields = ("blocker__username", "blocked__username")
    autocomplete_fields = ("blocker", "blocked")
