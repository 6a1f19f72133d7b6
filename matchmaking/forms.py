"""The queue's forms: a search (its formats and optional rating limit), and a party invitation."""

from __future__ import annotations

from django import forms

from ladder import formats
from matchmaking.services import BAD_GAP, MAX_RATING_GAP

UNKNOWN_FORMAT = "Choose the formats from the list."
NO_USERNAME = "Type the username of the player to invite."


class QueueJoinForm(forms.Form):
    """``max_rating_gap``: empty for any opponent, else 1 to ``MAX_RATING_GAP`` (as the API takes it).

    ``formats``: the codes ticked. The form with the checkboxes also sends ``formats_shown``, so
    nothing ticked is told apart from a form without checkboxes (a ladder with one format),
    which searches the ladder's default.
    """

    max_rating_gap = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_RATING_GAP,
        error_messages={key: BAD_GAP for key in ("invalid", "min_value", "max_value")},
    )
    formats = forms.MultipleChoiceField(
        required=False, choices=formats.CHOICES, error_messages={"invalid_choice": UNKNOWN_FORMAT}
    )
    formats_shown = forms.BooleanField(required=False)

    def formats_wanted(self) -> list[str] | None:
        """The codes to search (validated against the ladder by the service), or None for its default."""
        codes: list[str] = self.cleaned_data["formats"]
        if not codes and not self.cleaned_data["formats_shown"]:
            return None
        return codes


class PartyInviteForm(forms.Form):
    username = forms.CharField(max_length=150, error_messages={"required": NO_USERNAME})
