"""The ladder admin's "Change rating settings" page: a form, a preview and a recorded change.

Once a ladder has rated games its rating fields are read-only on the ladder form
(``LadderAdmin.get_readonly_fields``); this page is the one way to change them. It only
parses the form and calls ``ladder.standings.rating_settings``.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from accounts.http import AuthenticatedHttpRequest
from ladder.models import Ladder
from ladder.standings.rating_settings import (
    RATING_SETTING_FIELDS,
    ladder_has_rated_events,
    rating_settings_change,
    rating_settings_preview,
)
from ratings.models import RatingSettingsChange, SettingsChangeMode

REASON_REQUIRED_TO_APPLY = "Give a reason to apply the change; it is kept with the record of it."

MODE_HELP = {
    SettingsChangeMode.FROM_NOW_ON: "Every rating stays as it is. Every RD is brought up to date now under the old "
    "settings; later games, idle time and new members use the new ones.",
    SettingsChangeMode.RERATE: "Every game since the ladder began is rated again under the new settings, from every "
    "member's new initial values, as if the ladder had always had them. Ratings move; the old history rows are kept "
    "as superseded history. The preview shows how.",
}


class RatingSettingsForm(forms.Form):
    """The rating fields of ``Ladder`` (their own labels, help and limits), how to apply them, and why."""

    mode = forms.ChoiceField(
        label="Apply",
        choices=SettingsChangeMode.choices,
        initial=SettingsChangeMode.FROM_NOW_ON,
        widget=forms.RadioSelect,
    )
    reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Why the settings change; kept with the record and in the admin log. Needed to apply.",
    )

    def __init__(self, *args: Any, ladder: Ladder, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings_fields = {name: _form_field(name, initial=getattr(ladder, name)) for name in RATING_SETTING_FIELDS}
        self.fields = {**settings_fields, **self.fields}

    def values(self) -> dict[str, object]:
        return {name: self.cleaned_data[name] for name in RATING_SETTING_FIELDS}


def _form_field(name: str, *, initial: object) -> forms.Field:
    """The form field of ``Ladder.<name>`` as the model defines it, showing ``initial``."""
    model_field = Ladder._meta.get_field(name)
    field = model_field.formfield() if isinstance(model_field, models.Field) else None
    if field is None:
        raise TypeError(f"Ladder.{name} is not an editable field: it cannot be a rating setting")
    field.initial = initial
    return field


def _prefill(request: AuthenticatedHttpRequest) -> dict[str, str]:
    """Values given in the address (``?engine=glicko2&tau=0.3&mode=rerate``), shown instead of the ladder's.

    The "Prediction quality" page links here with its recommended settings; nothing is
    applied until the moderator previews and applies them with a reason, as for any change.
    """
    names = (*RATING_SETTING_FIELDS, "mode", "reason")
    return {name: request.GET[name] for name in names if name in request.GET}


def rating_settings_view(
    model_admin: admin.ModelAdmin[Ladder], request: AuthenticatedHttpRequest, object_id: str
) -> HttpResponse:
    ladder = model_admin.get_object(request, object_id)
    if ladder is None:
        raise Http404("No such ladder.")
    if not model_admin.has_change_permission(request, ladder):
        raise PermissionDenied
    if request.method == "POST":
        form = RatingSettingsForm(request.POST, ladder=ladder)
    else:
        form = RatingSettingsForm(ladder=ladder, initial=_prefill(request))
    preview = None
    preview_error = ""
    if request.method == "POST" and form.is_valid():
        values = form.values()
        if "_apply" in request.POST:
            reason = form.cleaned_data["reason"].strip()
            if not reason:
                form.add_error("reason", REASON_REQUIRED_TO_APPLY)
            else:
                try:
                    change = rating_settings_change(
                        ladder=ladder,
                        values=values,
                        mode=form.cleaned_data["mode"],
                        reason=reason,
                        moderator=request.user,
                    )
                except ValidationError as exc:
                    form.add_error(None, exc)
                else:
                    old, new = change.old_values, change.new_values
                    described = ", ".join(f"{name} {old[name]} → {new[name]}" for name in change.changed_fields)
                    model_admin.log_change(
                        request, ladder, f"Changed rating settings ({change.get_mode_display()}): {described}. {reason}"
                    )
                    done = (
                        f"re-rated {change.replayed_events:,} events"
                        if change.mode == SettingsChangeMode.RERATE
                        else f"they apply from now on ({change.materialised:,} RDs brought up to date)"
                    )
                    model_admin.message_user(
                        request, f"{ladder.name}: rating settings changed, {done}.", messages.SUCCESS
                    )
                    return HttpResponseRedirect(reverse("admin:ladder_ladder_change", args=[ladder.pk]))
        else:
            try:
                preview = rating_settings_preview(ladder=ladder, values=values)
            except ValidationError as exc:
                if getattr(exc, "code", None) == "preview_too_long":
                    preview_error = " ".join(exc.messages)
                else:
                    form.add_error(None, exc)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Change the rating settings of {ladder.name}",
        "opts": Ladder._meta,
        "original": ladder,
        "ladder": ladder,
        "form": form,
        "settings_fields": [form[name] for name in RATING_SETTING_FIELDS],
        "mode_help": [(mode.label, MODE_HELP[mode]) for mode in SettingsChangeMode],
        "preview": preview,
        "preview_error": preview_error,
        "has_rated_events": ladder_has_rated_events(ladder=ladder),
        "prefilled": request.method != "POST" and bool(_prefill(request)),
        "changes": RatingSettingsChange.objects.filter(ladder=ladder).select_related("changed_by")[:10],
        "media": model_admin.media + form.media,
    }
    return TemplateResponse(request, "admin/ladder/ladder/rating_settings.html", context)


__all__ = ["RatingSettingsForm", "rating_settings_view"]
