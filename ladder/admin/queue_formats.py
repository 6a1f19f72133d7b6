"""The ladder form's queue formats: checkboxes for ``Ladder.queue_formats``, a comma-separated string.

The model keeps the codes as one string ("1v1,2v2,ffa4"); the admin offers each format of
``ladder.formats`` as a checkbox and writes the ticked codes back in the formats' own order.
Whether the ladder's game formats allow them is ``Ladder.clean``'s to say: its errors land on
this field.
"""

from __future__ import annotations

from typing import Any

from django import forms

from ladder import formats
from ladder.models import Ladder


def _codes(value: object) -> list[str]:
    """The codes in ``value``: the model's string or the form's list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [code.strip() for code in value.split(",") if code.strip()]
    return [str(code) for code in value]  # type: ignore[attr-defined]


class QueueFormatsField(forms.MultipleChoiceField):
    """Ticked formats in, the model's comma-separated codes out (in the order of ``formats.FORMATS``)."""

    widget = forms.CheckboxSelectMultiple

    def __init__(self, **kwargs: Any) -> None:
        model_field = Ladder._meta.get_field("queue_formats")
        kwargs.setdefault("choices", formats.CHOICES)
        kwargs.setdefault("required", False)
        kwargs.setdefault("label", str(model_field.verbose_name).capitalize())
        kwargs.setdefault("help_text", model_field.help_text)
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> list[str]:
        return _codes(value)

    def clean(self, value: Any) -> str:
        ticked = set(super().clean(value))
        return ",".join(code for code in formats.FORMATS if code in ticked)

    def has_changed(self, initial: Any, data: Any) -> bool:
        return set(_codes(initial)) != set(_codes(data))
