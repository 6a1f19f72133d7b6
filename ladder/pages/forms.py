"""Forms for reporting results.

They only turn what a person typed into ``SideInput`` values: usernames into accounts
(one query whatever the number of names) and "I won" into placements. Every rule about
who may report what stays in ``ladder.matches.reporting.match_report``, whose messages the
view shows as the form's errors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, cast

from django import forms
from django.db.models.functions import Lower
from django.utils import timezone

from accounts.models import User
from ladder.matches.checks import SideInput
from ladder.models import MAX_PLAYERS_PER_MATCH, Ladder

UNKNOWN_PLAYER = "No player is called “%(name)s”."
UNKNOWN_PLAYERS = "No players are called %(names)s."
NOT_YOURSELF = "That is you: enter your opponent's username."
NO_PLAYERS = "Enter at least one username."

WON, LOST, DRAW = "won", "lost", "draw"
SIDES_WITHOUT_JS = 4
DATETIME_LOCAL = "%Y-%m-%dT%H:%M"


def split_usernames(text: str) -> list[str]:
    """Usernames typed as "alice, bob" (commas or spaces; usernames contain neither)."""
    return [name for name in re.split(r"[\s,]+", text) if name]


def users_by_name(names: Iterable[str]) -> dict[str, User]:
    """Accounts for ``names`` in one query, keyed by the lower-cased name (usernames ignore case)."""
    wanted = {name.lower() for name in names}
    if not wanted:
        return {}
    found = User.objects.annotate(lower_name=Lower("username")).filter(lower_name__in=wanted)
    return {user.lower_name: user for user in found}


def _played_at_field(ladder: Ladder) -> forms.DateTimeField:
    window = f" At most {ladder.backdate_hours} hours ago." if ladder.backdate_hours else ""
    return forms.DateTimeField(
        label=f"Played at ({timezone.get_current_timezone_name()} time)",
        required=False,
        input_formats=[DATETIME_LOCAL, "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=DATETIME_LOCAL),
        help_text=f"Leave empty for now. Read in your time zone, which you choose in Settings.{window}",
    )


class OneVsOneReportForm(forms.Form):
    """The reporter against one opponent: the common case, three fields."""

    opponent = forms.CharField(
        label="Opponent",
        max_length=30,
        widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "none", "spellcheck": "false"}),
        help_text="Their username.",
    )
    result = forms.ChoiceField(label="Result", widget=forms.RadioSelect)

    def __init__(self, *args: Any, ladder: Ladder, reporter: User, **kwargs: Any) -> None:
        kwargs.setdefault("prefix", "duel")
        super().__init__(*args, **kwargs)
        self.ladder = ladder
        self.reporter = reporter
        choices = [(WON, "I won"), (LOST, "I lost")]
        if ladder.allow_draws:
            choices.append((DRAW, "Draw"))
        cast(forms.ChoiceField, self.fields["result"]).choices = choices
        self.fields["played_at"] = _played_at_field(ladder)

    def clean_opponent(self) -> User:
        name = self.cleaned_data["opponent"].strip()
        opponent = users_by_name([name]).get(name.lower())
        if opponent is None:
            raise forms.ValidationError(UNKNOWN_PLAYER, code="unknown_player", params={"name": name})
        if opponent.pk == self.reporter.pk:
            raise forms.ValidationError(NOT_YOURSELF, code="yourself")
        return opponent

    def sides(self) -> list[SideInput]:
        result = self.cleaned_data["result"]
        mine, theirs = {WON: (1, 2), LOST: (2, 1), DRAW: (1, 1)}[result]
        return [SideInput([self.reporter], mine), SideInput([self.cleaned_data["opponent"]], theirs)]


class SideForm(forms.Form):
    """One side of a team game or free-for-all: its players and where it placed."""

    players = forms.CharField(
        label="Players",
        max_length=400,
        widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "none", "spellcheck": "false"}),
    )
    placement = forms.IntegerField(
        label="Place",
        min_value=1,
        max_value=MAX_PLAYERS_PER_MATCH,
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )

    def __init__(self, *args: Any, number: int = 1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.number = number
        # A pre-filled place keeps an untouched row "unchanged", so it is skipped, not an error.
        self.fields["placement"].initial = number
        self.fields["players"].widget.attrs["placeholder"] = "alice, bob" if number == 1 else "carol, dave"
        self.fields["players"].help_text = "Usernames, separated by commas." if number == 1 else ""

    def clean_players(self) -> list[str]:
        names = split_usernames(self.cleaned_data["players"])
        if not names:
            raise forms.ValidationError(NO_PLAYERS, code="no_players")
        return names


class BaseSideFormSet(forms.BaseFormSet):
    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        return {**super().get_form_kwargs(index), "number": (index or 0) + 1}

    def clean(self) -> None:
        """Resolve every side's names at once; an unknown name is an error on its side."""
        super().clean()
        filled = [form for form in self.forms if form.has_changed() and "players" in form.cleaned_data]
        known = users_by_name(name for form in filled for name in form.cleaned_data["players"])
        for form in filled:
            names = form.cleaned_data["players"]
            unknown = [name for name in names if name.lower() not in known]
            if len(unknown) == 1:
                form.add_error("players", forms.ValidationError(UNKNOWN_PLAYER, params={"name": unknown[0]}))
            elif unknown:
                quoted = ", ".join(f"“{name}”" for name in unknown)
                form.add_error("players", forms.ValidationError(UNKNOWN_PLAYERS, params={"names": quoted}))
            else:
                form.cleaned_data["users"] = [known[name.lower()] for name in names]


SideFormSet = forms.formset_factory(
    SideForm,
    formset=BaseSideFormSet,
    extra=SIDES_WITHOUT_JS,
    max_num=MAX_PLAYERS_PER_MATCH,
    absolute_max=MAX_PLAYERS_PER_MATCH,
    validate_max=True,
)


class TeamReportForm(forms.Form):
    """Any number of sides (teams or single players) with placements, plus when it was played.

    The sides are a formset: without JavaScript the page offers four rows and empty ones
    are ignored; with htmx "Add side" fetches one more row and bumps the formset count.
    """

    def __init__(
        self, data: Any = None, *, ladder: Ladder, reporter: User, rows: int = SIDES_WITHOUT_JS, **kwargs: Any
    ) -> None:
        super().__init__(data, prefix="team", **kwargs)
        self.ladder = ladder
        self.reporter = reporter
        self.fields["played_at"] = _played_at_field(ladder)
        self.formset = SideFormSet(data, prefix="sides")
        self.formset.extra = max(2, min(rows, self.most_sides))  # unbound only; bound ones count TOTAL_FORMS

    @property
    def most_players(self) -> int:
        """The most players in one of this ladder's games (every side counted)."""
        return min(self.ladder.max_players, MAX_PLAYERS_PER_MATCH)

    @property
    def most_sides(self) -> int:
        return self.most_players

    def is_valid(self) -> bool:
        form_ok = super().is_valid()
        return self.formset.is_valid() and form_ok

    def sides(self) -> list[SideInput]:
        return [
            SideInput(form.cleaned_data["users"], form.cleaned_data["placement"])
            for form in self.formset.forms
            if form.has_changed()
        ]


def side_form(*, index: int) -> SideForm:
    """The row "Add side" appends: the formset's form number ``index`` (0-based)."""
    return SideForm(prefix=f"sides-{index}", number=index + 1)


def one_v_one_opponent(sides: Sequence[SideInput], reporter: User) -> User | None:
    """The other player of a 1 v 1, for the success message."""
    if len(sides) == 2 and all(len(side.players) == 1 for side in sides):
        return next((side.players[0] for side in sides if side.players[0].pk != reporter.pk), None)
    return None


DISPUTE_REASON_MAX = 2000
REASON_TOO_LONG = "Keep the reason to 2,000 characters or fewer: it has %(show_value)s. Nothing was disputed."


class DisputeForm(forms.Form):
    """Why a result is wrong. Refused, never cut, beyond 2,000 characters (the API's limit too)."""

    reason = forms.CharField(
        required=False,
        max_length=DISPUTE_REASON_MAX,
        error_messages={"max_length": REASON_TOO_LONG},
    )

    def reason_or_error(self) -> tuple[str, str]:
        """The reason typed, or "" and the error message to show."""
        if self.is_valid():
            return self.cleaned_data["reason"], ""
        return "", " ".join(str(message) for message in self.errors["reason"])
