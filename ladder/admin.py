from __future__ import annotations

import zoneinfo

from django import forms
from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from ladder.models import Ladder


class LadderAdminForm(forms.ModelForm):
    """The admin builds the form from the fieldsets; this only offers time zones as a list."""

    time_zone = forms.ChoiceField(
        choices=[(name, name) for name in sorted(zoneinfo.available_timezones())],
        initial="UTC",
        help_text=Ladder._meta.get_field("time_zone").help_text,
    )


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    form = LadderAdminForm
    list_display = ("name", "game", "engine", "member_count", "is_listed", "created_at")
    list_filter = ("engine", "is_listed", "allow_teams", "allow_free_for_all")
    search_fields = ("name", "slug", "game")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("name", "slug", "game", "description", "is_listed")}),
        (
            "Rating engine",
            {
                "fields": ("engine", "initial_rating", "initial_rd", "rd_max"),
                "description": "The engine and starting values for every new member. Ratings are on the usual "
                "Glicko scale (1500 average); RD is the uncertainty, about a third of the range a player's true "
                "strength is 95% sure to be in either way.",
            },
        ),
        (
            "Timed Glicko (TGR)",
            {
                "fields": ("rd_growth_per_day", "luck_p"),
                "description": "Used when the engine is Timed Glicko.",
            },
        ),
        (
            "Glicko-1 and Glicko-2",
            {"fields": ("glicko_c", "rating_period_days", "initial_volatility", "tau"), "classes": ("collapse",)},
        ),
        ("Elo", {"fields": ("elo_k",), "classes": ("collapse",)}),
        (
            "Game formats",
            {
                "fields": (
                    "allow_one_vs_one",
                    "allow_teams",
                    "allow_uneven_teams",
                    "allow_free_for_all",
                    "max_players",
                    "allow_draws",
                    "team_update",
                ),
            },
        ),
        (
            "Leaderboard",
            {"fields": ("leaderboard_scale", "provisional_rd", "show_provisional", "time_zone")},
        ),
        (
            "Matchmaking queue",
            {
                "fields": (
                    "queue_min_win_probability",
                    "queue_widening_per_minute",
                    "queue_widest_min_win_probability",
                    "queue_timeout_seconds",
                ),
            },
        ),
        ("Record", {"fields": ("created_at", "updated_at"), "classes": ("collapse",)}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Ladder]:
        return super().get_queryset(request).annotate(_members=Count("ratings", filter=Q(ratings__is_active=True)))

    @admin.display(description="members", ordering="_members")
    def member_count(self, obj: Ladder) -> int:
        return obj._members
