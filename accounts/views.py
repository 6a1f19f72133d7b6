from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from accounts.forms import AccountSettingsForm, SignUpForm
from accounts.models import User
from accounts.throttling import signup_refused_message, signup_take, signup_wait


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form = SignUpForm(request.POST or None)
    # Counted before the form is saved: saving hashes the password, the costly part.
    wait = signup_wait(request=request)
    if request.method == "POST" and not wait and form.is_valid():
        wait = signup_take(request=request)
        if not wait:
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.username}! Pick a ladder below and join it to start playing.")
            return redirect("home")
    if wait:
        # A form shown (GET) says so at once; a form sent is refused with 429.
        return _signup_refused(request, form, wait, status=429 if request.method == "POST" else 200)
    return render(request, "registration/signup.html", {"form": form})


def _signup_refused(request: HttpRequest, form: SignUpForm, wait: int, *, status: int) -> HttpResponse:
    context = {"form": form, "refused": signup_refused_message(wait)}
    response = render(request, "registration/signup.html", context, status=status)
    response["Retry-After"] = str(wait)
    return response


def profile(request: HttpRequest, username: str) -> HttpResponse:
    player = get_object_or_404(User, username__iexact=username, is_active=True)
    if player.username != username:
        return redirect(player, permanent=True)
    # The ladders and ratings come from the ratings app's {% player_ratings %} tag.
    return render(request, "accounts/profile.html", {"player": player})


@login_required
def account_settings(request: HttpRequest) -> HttpResponse:
    form = AccountSettingsForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Your settings are saved.")
        return redirect("accounts:settings")
    return render(request, "accounts/settings.html", {"form": form})
