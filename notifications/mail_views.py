"""The pages of notification mails: a player's mail settings and the unsubscribe link.

The unsubscribe page needs no login: the signed token in its address is the proof. Its
GET only shows a button, because mail scanners follow links; the POST turns the mails
off. That POST is also RFC 8058's one-click request, which a mail client sends without a
page or a CSRF token, so this view alone is exempt from CSRF (the token is the secret).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from notifications import preferences
from notifications.models import EmailMode, Kind
from notifications.services import mailable

SAVED = "Your email settings are saved."


class PreferencesForm(forms.Form):
    """One choice of mode per kind the user may be sent, each field named after its kind."""

    def __init__(self, *args: Any, modes: dict[str, str], kinds: list[Kind], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for kind in kinds:
            self.fields[kind.value] = forms.ChoiceField(
                label=kind.label,
                help_text=preferences.KIND_HELP.get(kind.value, ""),
                choices=EmailMode.choices,
                initial=modes[kind.value],
                widget=forms.RadioSelect,
                error_messages={"required": "Choose off, at once or daily digest."},
            )


@login_required
@require_http_methods(["GET", "POST"])
def mail_settings(request: AuthenticatedHttpRequest) -> HttpResponse:
    user = request.user
    modes = preferences.modes_for([user.pk])[user.pk]
    kinds = preferences.kinds_for(is_staff=user.is_staff)
    form = PreferencesForm(request.POST or None, modes=modes, kinds=kinds)
    if request.method == "POST":
        if form.is_valid():
            preferences.preferences_set(user_id=user.pk, modes=form.cleaned_data)
            messages.success(request, SAVED)
            return redirect("notifications:preferences")
        status = 400
    else:
        status = 200
    context = {"form": form, "verified": user.pk in mailable([user.pk]), "email": user.email}
    return render(request, "notifications/preferences.html", context, status=status)


@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    try:
        user_id, scope = preferences.unsubscribe_read(token)
    except signing.BadSignature:
        return _refused(request, preferences.BAD_TOKEN)
    user = User.objects.filter(pk=user_id).first()
    if user is None:
        return _refused(request, preferences.NO_ACCOUNT)
    context = {"scope": preferences.scope_label(scope), "username": user.username, "done": False}
    if request.method == "POST":
        preferences.unsubscribe(user_id=user_id, scope=scope)
        context["done"] = True
    return render(request, "notifications/unsubscribed.html", context)


def _refused(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "notifications/unsubscribed.html", {"error": message}, status=400)
