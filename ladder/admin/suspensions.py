"""The admin's suspensions: a moderator suspends a player from one ladder, and lifts it.

A suspension is written through ``ladder.moderation.suspensions`` (so the player is told and
the ladder's cached leaderboard forgets them) and never edited afterwards: its change page
is read-only, and "Lift" ends it early with the moderator's name on the record.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from accounts.http import AuthenticatedHttpRequest
from ladder.models import Suspension
from ladder.moderation.suspensions import ENDS_IN_PAST, lift, suspend

ADD_FIELDS = ("ladder", "player", "reason", "ends_at")


class SuspensionForm(forms.ModelForm):
    class Meta:
        model = Suspension
        fields = ADD_FIELDS

    def clean_ends_at(self) -> Any:
        ends_at = self.cleaned_data.get("ends_at")
        if ends_at is not None and ends_at <= timezone.now():
            raise forms.ValidationError(ENDS_IN_PAST)
        return ends_at


@admin.register(Suspension)
class SuspensionAdmin(admin.ModelAdmin):
    form = SuspensionForm
    list_display = ("player", "ladder", "short_reason", "starts_at", "ends_at", "in_force")
    list_filter = ("ladder",)
    list_select_related = ("player", "ladder")
    search_fields = ("player__username",)
    autocomplete_fields = ("player", "ladder")
    actions = ("lift_selected",)
    date_hierarchy = "starts_at"

    def get_fields(self, request: HttpRequest, obj: Suspension | None = None) -> Any:
        if obj is None:
            return ADD_FIELDS
        return (*ADD_FIELDS, "starts_at", "created_by", "lifted_at", "lifted_by")

    def get_readonly_fields(self, request: HttpRequest, obj: Suspension | None = None) -> Any:
        # Written once through the service: a later edit would skip telling the player.
        return () if obj is None else self.get_fields(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Suspension | None = None) -> bool:
        return False  # kept as the record of a decision; lift it instead

    @admin.display(description="reason")
    def short_reason(self, obj: Suspension) -> str:
        return obj.reason if len(obj.reason) <= 60 else obj.reason[:59] + "…"

    @admin.display(description="in force", boolean=True)
    def in_force(self, obj: Suspension) -> bool:
        now = timezone.now()
        return obj.lifted_at is None and obj.starts_at <= now and (obj.ends_at is None or obj.ends_at > now)

    def save_model(self, request: HttpRequest, obj: Suspension, form: forms.ModelForm, change: bool) -> None:
        if change:  # pragma: no cover - the change page is read-only
            return
        user = request.user if request.user.is_authenticated else None
        made = suspend(
            ladder=obj.ladder, player=obj.player, reason=obj.reason, ends_at=obj.ends_at, by=user, now=timezone.now()
        )
        obj.pk, obj.starts_at, obj.created_by = made.pk, made.starts_at, made.created_by

    @admin.action(description="Lift the selected suspensions", permissions=["change"])
    def lift_selected(self, request: AuthenticatedHttpRequest, queryset: QuerySet[Suspension]) -> None:
        now = timezone.now()
        lifted = 0
        for suspension in queryset.filter(lifted_at__isnull=True).select_related("ladder"):
            lift(suspension=suspension, by=request.user, now=now)
            lifted += 1
        messages.success(request, f"Lifted {lifted} suspension{'s' if lifted != 1 else ''}.")
