"""The admin's marks: a moderator marks an account (site-wide, silently), and lifts the mark.

A mark is written through ``ladder.moderation.marks`` (so the ladders' cached leaderboards
forget the account) with the moderator's note, and never edited afterwards: its change page
is read-only history, and "Lift" ends it with a note and the moderator's name on the record.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from accounts.http import AuthenticatedHttpRequest
from ladder.models import PlayerMark
from ladder.moderation.marks import mark_lift, mark_player

ADD_FIELDS = ("player", "kind", "other_account", "note")
LIFTED = "Lifted the mark on {player}."


class LiftForm(forms.Form):
    lift_note = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), label="Why lift it")


@admin.register(PlayerMark)
class PlayerMarkAdmin(admin.ModelAdmin):
    list_display = ("player", "kind", "other_account", "created_at", "created_by", "in_force")
    list_filter = ("kind", ("lifted_at", admin.EmptyFieldListFilter))
    list_select_related = ("player", "other_account", "created_by")
    search_fields = ("player__username", "other_account__username")
    autocomplete_fields = ("player", "other_account")
    date_hierarchy = "created_at"

    def get_fields(self, request: HttpRequest, obj: PlayerMark | None = None) -> Any:
        if obj is None:
            return ADD_FIELDS
        return (*ADD_FIELDS, "created_at", "created_by", "lifted_at", "lifted_by", "lift_note")

    def get_readonly_fields(self, request: HttpRequest, obj: PlayerMark | None = None) -> Any:
        # Written once through the service: history, never edited.
        return () if obj is None else self.get_fields(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: PlayerMark | None = None) -> bool:
        return False  # kept as the record of a decision; lift it instead

    @admin.display(description="in force", boolean=True)
    def in_force(self, obj: PlayerMark) -> bool:
        return obj.lifted_at is None

    def get_form(self, request: Any, obj: PlayerMark | None = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is None:
            the_request = request

            class MarkAddForm(form):  # type: ignore[misc, valid-type]
                def _post_clean(self) -> None:
                    # The service checks (one mark in force, a note, the other account) as form errors.
                    super()._post_clean()
                    if self.errors:
                        return
                    data = self.cleaned_data
                    try:
                        self.instance = mark_player(
                            player=data["player"],
                            kind=data["kind"],
                            note=data["note"],
                            other_account=data.get("other_account"),
                            by=the_request.user,
                            now=timezone.now(),
                        )
                    except ValidationError as exc:
                        self.add_error(None, exc)

            return MarkAddForm
        return form

    def save_model(self, request: HttpRequest, obj: PlayerMark, form: forms.ModelForm, change: bool) -> None:
        pass  # written by the form's ``mark_player``; the change page is read-only

    def get_urls(self) -> list[Any]:
        lift = path("<int:pk>/lift/", self.admin_site.admin_view(self.lift_view), name="ladder_playermark_lift")
        return [lift, *super().get_urls()]

    def lift_view(self, request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
        """Lift one mark, with the moderator's note."""
        mark = get_object_or_404(PlayerMark.objects.select_related("player"), pk=pk)
        if not self.has_change_permission(request, mark):
            return HttpResponse(status=403)
        form = LiftForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                mark_lift(mark=mark, note=form.cleaned_data["lift_note"], by=request.user, now=timezone.now())
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, LIFTED.format(player=mark.player))
                return HttpResponseRedirect(reverse("admin:ladder_playermark_change", args=[mark.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "mark": mark,
            "form": form,
            "title": f"Lift the mark on {mark.player}",
        }
        return TemplateResponse(
            request, "admin/ladder/playermark/lift.html", context, status=400 if form.errors else 200
        )

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {**(extra_context or {}), "show_save": False, "show_save_and_continue": False}
        mark = PlayerMark.objects.filter(pk=object_id, lifted_at__isnull=True).first() if object_id.isdigit() else None
        if mark is not None:
            extra["lift_url"] = reverse("admin:ladder_playermark_lift", args=[mark.pk])
        return super().change_view(request, object_id, form_url, extra_context=extra)
