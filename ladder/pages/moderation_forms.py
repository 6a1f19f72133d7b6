"""The forms of a moderator's decisions, shared by the admin's actions and the match page's Moderator box.

Both call the same services (``ladder.matches.decisions``); these only ask for what the
services need: a reason, and for a correction each side's place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms

from ladder.models import MatchSide

REASON_MAX_LENGTH = 2000


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=REASON_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Required. Kept with the match; its players see it.",
    )


class CorrectionForm(ReasonForm):
    """Each side's place (1 is best, equal places draw), then the reason."""

    def __init__(self, *args: Any, sides: Sequence[MatchSide], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sides = list(sides)
        self.fields["reason"].label = "Reason for the correction"  # the void form beside it asks "Reason"
        for side in self.sides:
            names = ", ".join(p.player.username for p in side.participants.all())
            self.fields[f"side_{side.index}"] = forms.IntegerField(
                label=f"Place of {names}", min_value=1, initial=side.placement
            )
        self.order_fields([f"side_{side.index}" for side in self.sides] + ["reason"])

    def placements(self) -> list[int]:
        """The places in side order, as ``match_correct`` takes them (after ``is_valid()``)."""
        return [self.cleaned_data[f"side_{side.index}"] for side in self.sides]
