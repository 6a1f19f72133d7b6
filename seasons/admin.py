"""Seasons in the admin: moderators schedule seasons, set the reset and the badge tiers, close a season now."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html

from seasons.models import Badge, BadgeTier, Season, SeasonSettings, SeasonStatus
from seasons.services import season_close


@admin.register(Season)
class SeasonAdmin(admin.ModelAdmin):
    list_display = ("name", "ladder", "starts_at", "ends_at", "status", "ranked_count", "page")
    list_filter = ("ladder", "status")
    search_fields = ("name",)
    date_hierarchy = "starts_at"
    readonly_fields = ("closed_at", "ranked_count", "reset")
    actions = ("close_now",)

    def get_readonly_fields(self, request: HttpRequest, obj: Season | None = None) -> tuple[str, ...]:
        """A closed season is history: nothing of it changes."""
        if obj is not None and obj.is_closed:
            return ("ladder", "name", "starts_at", "ends_at", "status", *self.readonly_fields)
        return self.readonly_fields

    def get_form(self, request: HttpRequest, obj: Season | None = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        status = form.base_fields.get("status")
        if isinstance(status, forms.ChoiceField):
            # Closing goes through the action (or the beat), which archives and resets.
            status.choices = [(value, label) for value, label in SeasonStatus.choices if value != SeasonStatus.CLOSED]
            status.help_text = "Closed by the hourly task at the end, or by the “Close now” action once it has ended."
        return form

    def has_delete_permission(self, request: HttpRequest, obj: Season | None = None) -> bool:
        return obj is None or not obj.is_closed

    @admin.display(description="page")
    def page(self, obj: Season) -> str:
        return format_html('<a href="{}">standings</a>', obj.get_absolute_url())

    @admin.action(description="Close now (seasons whose end has passed)", permissions=["change"])
    def close_now(self, request: HttpRequest, queryset: QuerySet[Season]) -> None:
        now = timezone.now()
        closed = 0
        for season in queryset.exclude(status=SeasonStatus.CLOSED).order_by("ends_at", "pk"):
            try:
                result = season_close(season=season, now=now)
            except ValidationError as error:
                self.message_user(request, " ".join(error.messages), messages.ERROR)
                continue
            closed += result.closed
        if closed:
            self.message_user(request, f"Closed {closed} season{'s' if closed != 1 else ''}.", messages.SUCCESS)


@admin.register(SeasonSettings)
class SeasonSettingsAdmin(admin.ModelAdmin):
    list_display = ("ladder", "mode", "factor", "center", "rd_reset")
    list_filter = ("mode",)


@admin.register(BadgeTier)
class BadgeTierAdmin(admin.ModelAdmin):
    list_display = ("name", "ladder", "top_n", "basis")
    list_filter = ("ladder", "basis")


@admin.register(Badge)
class BadgeAdmin(admin.ModelAdmin):
    list_display = ("player", "tier", "season", "rank")
    list_filter = ("season__ladder",)
    search_fields = ("player__username",)
    list_select_related = ("player", "tier", "season")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Badge | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Badge | None = None) -> bool:
        return False
