from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from ladder import formats
from matchmaking.models import Block, Party, PartyMember, QueueEntry


@admin.register(QueueEntry)
class QueueEntryAdmin(admin.ModelAdmin):
    list_display = (
        "player",
        "ladder",
        "status",
        "format_labels",
        "party",
        "rating",
        "joined_at",
        "last_seen_at",
        "opponent",
        "match",
    )
    list_filter = ("ladder", "status")
    list_select_related = ("player", "ladder", "opponent", "party")
    search_fields = ("player__username",)
    readonly_fields = [field.name for field in QueueEntry._meta.fields] + ["format_labels"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="formats", ordering="formats")
    def format_labels(self, obj: QueueEntry) -> str:
        """The searched formats by name ("2 v 2, free-for-all of 4"), not the stored bits."""
        return ", ".join(kind.label for kind in formats.of_mask(obj.formats)) or "none"


class PartyMemberInline(admin.TabularInline):
    """Who was invited, who is in, who declined or left: a record, not a form."""

    model = PartyMember
    fields = ("player", "status", "invited_at", "answered_at")
    readonly_fields = fields
    ordering = ("invited_at", "pk")
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Party)
class PartyAdmin(admin.ModelAdmin):
    """Parties are made and left by players (``matchmaking.parties``); the admin only shows them."""

    list_display = ("pk", "leader", "ladder", "created_at", "ended_at")
    list_filter = ("ladder",)
    list_select_related = ("leader", "ladder")
    search_fields = ("leader__username",)
    readonly_fields = ("ladder", "leader", "created_at", "ended_at")
    inlines = (PartyMemberInline,)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Party | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Party | None = None) -> bool:
        return False


@admin.register(Block)
class BlockAdmin(admin.ModelAdmin):
    list_display = ("blocker", "blocked", "created_at")
    search_fields = ("blocker__username", "blocked__username")
    autocomplete_fields = ("blocker", "blocked")
