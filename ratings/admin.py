from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone

from ratings.models import PlayerRating


@admin.register(PlayerRating)
class PlayerRatingAdmin(admin.ModelAdmin):
    """Read-mostly: rating numbers change only through rated games and recorded adjustments."""

    list_display = ("player", "ladder", "rating_display", "rd_now", "games", "wins", "losses", "draws", "is_active")
    list_filter = ("ladder", "is_active")
    list_select_related = ("player", "ladder")
    search_fields = ("player__username",)
    ordering = ("ladder", "-rating")
    readonly_fields = (
        "player",
        "ladder",
        "rating",
        "rd",
        "volatility",
        "rd_as_of",
        "rd_now",
        "games",
        "wins",
        "losses",
        "draws",
        "last_played_at",
        "joined_at",
        "left_at",
    )
    fields = (*readonly_fields, "is_active")

    @admin.display(description="rating", ordering="rating")
    def rating_display(self, obj: PlayerRating) -> str:
        return f"{obj.rating:.1f}"

    @admin.display(description="RD now")
    def rd_now(self, obj: PlayerRating) -> str:
        return f"{obj.rd_at(timezone.now()):.1f}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: PlayerRating | None = None) -> bool:
        return False
