"""Tournaments in the admin: moderators create them and change their settings until they start.

Everything after the start (pausing, deciding a game, withdrawing an entry, pairing a round
again, cancelling) is on the tournament's page, each with a reason, through the services.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.forms import ModelForm
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html

from core.admin import ReadOnlyAdmin
from tournaments import formats
from tournaments.models import (
    Action,
    Board,
    Entry,
    PodSeat,
    RequestedBye,
    Status,
    Tournament,
    TournamentPointsSettings,
)

SETTINGS = (
    "ladder", "name", "slug", "description", "format", "team_size", "rounds", "double_round_robin", "groups",
    "advance", "pod_size", "points_win", "points_draw", "points_loss", "points_bye", "points_absent", "tiebreaks",
    "registration_closes_at", "starts_at", "check_in_minutes", "round_minutes", "min_rating", "max_rating",
    "min_games", "rated",
)  # fmt: skip


class TournamentForm(ModelForm):
    class Meta:
        model = Tournament
        fields = SETTINGS

    def clean_tiebreaks(self) -> str:
        value = self.cleaned_data["tiebreaks"]
        codes = [code.strip() for code in value.split(",") if code.strip()]
        unknown = [code for code in codes if code not in formats.TIEBREAKS]
        if unknown:
            raise ValidationError(f"Unknown tie-break {unknown[0]}: choose from {', '.join(formats.TIEBREAKS)}.")
        return ",".join(codes)


class EntryInline(admin.TabularInline):
    model = Entry
    fields = ("name", "captain", "status", "seed", "rating", "group", "joined_round", "withdrawn_reason")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    form = TournamentForm
    list_display = ("name", "ladder", "format", "status", "starts_at", "current_round", "page")
    list_filter = ("ladder", "status", "format")
    search_fields = ("name",)
    prepopulated_fields = {"slug": ("name",)}
    inlines = (EntryInline,)

    def get_readonly_fields(self, request: HttpRequest, obj: Tournament | None = None) -> tuple[str, ...]:
        """Settings change until the start; then the tournament's page is where it is run."""
        if obj is not None and obj.status != Status.REGISTRATION:
            return SETTINGS
        return ()

    def save_model(self, request: HttpRequest, obj: Tournament, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)
        Action.objects.create(
            tournament=obj,
            actor=request.user,  # type: ignore[misc]
            action="change" if change else "create",
            reason="changed in the admin" if change else "created in the admin",
            at=timezone.now(),
        )

    def has_delete_permission(self, request: HttpRequest, obj: Tournament | None = None) -> bool:
        return bool(request.user.is_superuser) and (obj is None or obj.status == Status.REGISTRATION)

    @admin.display(description="page")
    def page(self, obj: Tournament) -> str:
        return format_html('<a href="{}">page</a>', obj.get_absolute_url())


@admin.register(Action)
class ActionAdmin(ReadOnlyAdmin):
    list_display = ("at", "tournament", "actor", "action", "reason")
    list_filter = ("action",)
    search_fields = ("tournament__name", "reason")


class PodSeatInline(admin.TabularInline):
    """A free-for-all pod's seats and places."""

    model = PodSeat
    fields = ("index", "entry", "place")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = ("tournament", "round", "number", "a", "b", "result", "kind", "match")
    list_filter = ("kind",)
    raw_id_fields = ("match",)
    inlines = (PodSeatInline,)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(RequestedBye)
class RequestedByeAdmin(ReadOnlyAdmin):
    """The Swiss byes asked for or given: read here; given and cancelled on the tournament's page."""

    list_display = ("tournament", "entry", "round", "given_by", "reason", "at")
    list_select_related = ("tournament", "entry", "given_by")
    search_fields = ("tournament__name", "entry__name", "reason")


@admin.register(TournamentPointsSettings)
class TournamentPointsSettingsAdmin(admin.ModelAdmin):
    """A ladder's constants of tournament points across events; a ladder without a row uses the seed's."""

    list_display = ("ladder", "base", "rank_power", "decay_days")
    list_select_related = ("ladder",)
