"""The queue's one form: the optional rating limit of a search."""

from __future__ import annotations

from django import forms

from matchmaking.services import BAD_GAP, MAX_RATING_GAP


class QueueJoinForm(forms.Form):
    """``max_rating_gap``: empty for any opponent, else 1 to ``MAX_RATING_GAP`` (as the API takes it)."""

    max_rating_gap = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_RATING_GAP,
        error_messages={key: BAD_GAP for key in ("invalid", "min_value", "max_value")},
    )
