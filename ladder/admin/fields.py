"""Match fields in the admin (docs/match-fields.md): a ladder's fields in their own list, filtered by
ladder, and a match's values on the match page. Moderators use both.

Not an inline on the ladder's page: every save of a ladder would then need the inline's
management form, which scripts and tests that post a ladder's settings do not send.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.models import MatchField, MatchFieldValue
from ladder.models.fields import CHOICE_MAX_LENGTH


class ChoicesField(forms.CharField):
    """A choice field's values, one per line (blank lines ignored), stored as a list."""

    widget = forms.Textarea(attrs={"rows": 5, "cols": 30})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [line.strip() for line in text.splitlines() if line.strip()]


class MatchFieldForm(forms.ModelForm):
    choices = ChoicesField(
        required=False,
        help_text=f"A choice field's values, one per line, in the order forms list them (at most "
        f"{CHOICE_MAX_LENGTH} characters each). Leave empty for other kinds.",
    )

    class Meta:
        model = MatchField
        fields = ("position", "name", "label", "kind", "scope", "required", "choices", "unrated_when_yes", "help_text")


@admin.register(MatchField)
class MatchFieldAdmin(admin.ModelAdmin):
    """A ladder's fields: *Match fields*, filtered by ladder (``?ladder__id__exact=<id>``)."""

    form = MatchFieldForm
    list_display = ("label", "name", "ladder", "kind", "scope", "required", "position")
    list_filter = ("ladder", "kind", "scope")
    list_select_related = ("ladder",)
    search_fields = ("name", "label", "ladder__name")
    fields = ("ladder", *MatchFieldForm.Meta.fields)


class MatchFieldValueInline(admin.TabularInline):
    """A match's values as reported; read-only, like the rest of the match page."""

    model = MatchFieldValue
    fields = ("field", "player", "value")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name = "game detail"
    verbose_name_plural = "game details (match fields)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[MatchFieldValue]:
        return super().get_queryset(request).select_related("field", "player")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
