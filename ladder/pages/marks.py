"""Marking an account from a reported player's case page (docs/rules.md §15, "Marks").

Two POST views, both for moderators and both calling ``ladder.moderation.marks``: mark the
player, or lift their mark. Success goes back to the case page; a refusal renders the mark
form alone with its error (400), never a 500. The player is not told.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from accounts.roles import is_moderator
from ladder.models import Ladder, MarkKind, PlayerMark
from ladder.moderation import marks

NOTE_MAX_LENGTH = 500
MARKED = "Marked {player} as {kind}. They are not told."
MARKED_BOOSTER = (
    "Marked {player} as a booster. They are not told. Below: give their victims back what they lost, or void "
    "their games since a day."
)
LIFTED = "Lifted the mark on {player}."
NO_SUCH_ACCOUNT = "No account is called {username}."
NOT_MARKED = "{player} is not marked."


class MarkForm(forms.Form):
    kind = forms.ChoiceField(choices=MarkKind.choices, widget=forms.RadioSelect, label="Mark as")
    other_account = forms.CharField(
        max_length=150,
        required=False,
        label="The other account",
        help_text="For another account of a player: the username it belongs with, if known.",
    )
    note = forms.CharField(
        max_length=NOTE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why",
        help_text="For the moderators; the player never reads it.",
    )

    def clean_other_account(self) -> User | None:
        username = self.cleaned_data["other_account"].strip()
        if not username:
            return None
        other = User.objects.filter(username=username).first()
        if other is None:
            raise forms.ValidationError(NO_SUCH_ACCOUNT.format(username=username))
        return other


class LiftForm(forms.Form):
    lift_note = forms.CharField(
        max_length=NOTE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why lift it",
        help_text="For the moderators.",
    )


def mark_context(player: User) -> dict[str, Any]:
    """What the case page's "Mark this account" box needs: the mark in force and the empty forms."""
    return {"mark": marks.mark_in_force(player=player), "mark_form": MarkForm(), "lift_form": LiftForm()}


def _moderated(request: AuthenticatedHttpRequest, slug: str, username: str) -> tuple[Ladder, User]:
    if not is_moderator(request.user):
        raise PermissionDenied(marks.NOT_A_MODERATOR)
    return get_object_or_404(Ladder, slug=slug), get_object_or_404(User, username=username)


def _refused(
    request: AuthenticatedHttpRequest,
    ladder: Ladder,
    player: User,
    *,
    mark: PlayerMark | None,
    mark_form: MarkForm,
    lift_form: LiftForm,
) -> HttpResponse:
    context = {"ladder": ladder, "player": player, "mark": mark, "mark_form": mark_form, "lift_form": lift_form}
    return render(request, "ladder/mark.html", context, status=400)


@require_POST
@login_required
def mark_add(request: AuthenticatedHttpRequest, slug: str, username: str) -> HttpResponse:
    """Marks ``username`` (site-wide) from their case page in ``slug``."""
    ladder, player = _moderated(request, slug, username)
    form = MarkForm(request.POST)
    if form.is_valid():
        try:
            mark = marks.mark_player(
                player=player,
                kind=form.cleaned_data["kind"],
                other_account=form.cleaned_data["other_account"],
                note=form.cleaned_data["note"],
                by=request.user,
                now=timezone.now(),
            )
        except ValidationError as exc:
            form.add_error(None, exc)  # a field's error lands on its field
        else:
            case = reverse("ladder:report_case", kwargs={"slug": ladder.slug, "username": player.username})
            if mark.kind == MarkKind.BOOSTER:  # the mark offers the remedies for its victims (§15, "Refunds")
                messages.success(request, MARKED_BOOSTER.format(player=player))
                return redirect(f"{case}#refunds")
            messages.success(request, MARKED.format(player=player, kind=mark.get_kind_display().lower()))
            return redirect(case)
    mark_now = marks.mark_in_force(player=player)
    return _refused(request, ladder, player, mark=mark_now, mark_form=form, lift_form=LiftForm())


@require_POST
@login_required
def mark_lift(request: AuthenticatedHttpRequest, slug: str, username: str) -> HttpResponse:
    """Lifts the mark in force on ``username``, with the moderator's note."""
    ladder, player = _moderated(request, slug, username)
    form = LiftForm(request.POST)
    mark = marks.mark_in_force(player=player)
    if mark is None:
        form.add_error(None, NOT_MARKED.format(player=player))
    elif form.is_valid():
        try:
            marks.mark_lift(mark=mark, note=form.cleaned_data["lift_note"], by=request.user, now=timezone.now())
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, LIFTED.format(player=player))
            return redirect("ladder:report_case", slug=ladder.slug, username=player.username)
    return _refused(request, ladder, player, mark=mark, mark_form=MarkForm(), lift_form=form)
