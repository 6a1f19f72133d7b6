"""The pages of signing in with Discord or Lichess (``accounts.oauth``, ``accounts.linking``).

A sign-in starts with a POST (the CSRF token checked), which sends the browser to the provider;
the provider sends it back to ``oauth_callback``. There a linked identity signs its account in
as a password would (a banned account refused, the sign-in recorded, the session's key
changed), a signed-in player who started from *Settings* links it, and an identity nobody
linked waits in the session for ``oauth_signup``, where its owner chooses a name. Whatever goes
wrong says so on the sign-in page (or *Settings*), and nothing is created.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.forms import ACCOUNT_BANNED, ProviderSignUpForm
from accounts.linking import (
    identity_account,
    identity_account_create,
    identity_link,
    identity_unlink,
    identity_used,
    username_propose,
)
from accounts.mail import verification_mail_send
from accounts.models import OAuthProvider, User
from accounts.oauth import (
    TURNED_OFF,
    Provider,
    ProviderError,
    authorization_data,
    authorization_redirect,
    identity_fetch,
    pending_forget,
    pending_identity,
    pending_keep,
    provider_get,
    provider_label,
)
from accounts.throttling import signup_refused_message, signup_take, signup_wait
from accounts.verification import VERIFY_LINK_DAYS

BACKEND = "django.contrib.auth.backends.ModelBackend"
LINKED = "{provider} is linked: you can sign in with {name} there."
UNLINKED = "{provider} is unlinked: it no longer signs in to your account."
LINK_SIGNED_OUT = "You were signed out before {provider} answered, so nothing was linked. Sign in and link it again."
ALREADY_SIGNED_IN = "You are signed in already. To sign in with {provider} too, link it here."
PENDING_LOST = "That sign-in had expired, so nothing was created. Start again."
TAKEN_MEANWHILE = "That name or address was taken a moment ago, so nothing was created. Choose again."
HAS_ACCOUNT_NOW = "This {provider} account has an account here now: sign in with {provider}."
WELCOME = "Welcome, {name}! Pick a ladder below and join it to start playing."
VERIFY_SENT = "We sent a link to {email}. Follow it within {days} days to confirm the address is yours."


def _provider(key: str) -> Provider | None:
    """The provider named in the address: 404 for a name that is no provider at all."""
    if key not in OAuthProvider.values:
        raise Http404("No such provider.")
    return provider_get(key)


def _turned_off(request: HttpRequest, key: str) -> HttpResponseRedirect:
    messages.error(request, TURNED_OFF.format(provider=provider_label(key)))
    return redirect("accounts:login")


def _callback_uri(request: HttpRequest, provider: Provider) -> str:
    return request.build_absolute_uri(reverse("accounts:oauth_callback", args=[provider.key.value]))


def _safe_next(request: HttpRequest, value: str) -> str:
    allowed = url_has_allowed_host_and_scheme(
        value, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return value if value and allowed else ""


@require_POST
def oauth_start(request: HttpRequest, provider: str) -> HttpResponse:
    """ "Sign in with Discord": off to the provider, with where to go after."""
    chosen = _provider(provider)
    if chosen is None:
        return _turned_off(request, provider)
    if request.user.is_authenticated:
        return redirect(settings.LOGIN_REDIRECT_URL)
    after = _safe_next(request, request.POST.get("next", ""))
    return authorization_redirect(
        request=request, provider=chosen, redirect_uri=_callback_uri(request, chosen), next=after
    )


@login_required
@require_POST
def oauth_link(request: HttpRequest, provider: str) -> HttpResponse:
    """*Settings*' "Link Discord": off to the provider, to come back to this account."""
    chosen = _provider(provider)
    if chosen is None:
        return _turned_off(request, provider)
    return authorization_redirect(
        request=request, provider=chosen, redirect_uri=_callback_uri(request, chosen), link_user=request.user.pk
    )


@require_GET
def oauth_callback(request: HttpRequest, provider: str) -> HttpResponse:
    """Where the provider sends the browser back (see the module's doc)."""
    chosen = _provider(provider)
    if chosen is None:
        return _turned_off(request, provider)
    ours = authorization_data(request=request, provider=chosen) or {}
    linking = ours.get("link_user")
    try:
        identity = identity_fetch(request=request, provider=chosen)
    except ProviderError as exc:
        messages.error(request, str(exc))
        return redirect(_settings_linked() if linking and request.user.is_authenticated else "accounts:login")
    now = timezone.now()
    if linking is not None:
        if not request.user.is_authenticated or request.user.pk != linking:
            messages.error(request, LINK_SIGNED_OUT.format(provider=chosen.label))
            return redirect("accounts:login")
        user = request.user
        assert isinstance(user, User)
        try:
            identity_link(user=user, identity=identity, now=now)
        except ValidationError as exc:
            messages.error(request, exc.messages[0])
        else:
            messages.success(request, LINKED.format(provider=chosen.label, name=identity.name))
        return redirect(_settings_linked())
    link = identity_account(identity=identity)
    if request.user.is_authenticated:
        if link is None or link.user_id != request.user.pk:
            messages.info(request, ALREADY_SIGNED_IN.format(provider=chosen.label))
            return redirect(_settings_linked())
        return redirect(settings.LOGIN_REDIRECT_URL)
    if link is None:
        pending_keep(request, identity)
        return redirect("accounts:oauth_signup")
    if not link.user.is_active:  # banned: as the password form says it, after the right password
        messages.error(request, ACCOUNT_BANNED)
        return redirect("accounts:login")
    identity_used(link=link, identity=identity, now=now)
    login(request, link.user, backend=BACKEND)  # a new session key; prints and the session recorded
    return redirect(_safe_next(request, str(ours.get("next") or "")) or settings.LOGIN_REDIRECT_URL)


def _settings_linked() -> str:
    return f"{reverse('accounts:settings')}#linked-heading"


@require_http_methods(["GET", "POST"])
def oauth_signup(request: HttpRequest) -> HttpResponse:
    """A first sign-in: choose the name to play under (a free one proposed) and the address.
    Counted against ``SIGNUP_RATE`` like the sign-up form."""
    if request.user.is_authenticated:
        return redirect(settings.LOGIN_REDIRECT_URL)
    identity = pending_identity(request)
    if identity is None:
        messages.error(request, PENDING_LOST)
        return redirect("accounts:login")
    label = provider_label(identity.provider)
    form = ProviderSignUpForm(
        request.POST if request.method == "POST" else None,
        initial={"username": username_propose(identity.name), "email": identity.email}
        if request.method == "GET"
        else None,
        provider_email=identity.email,
        provider_label=label,
    )
    context: dict[str, Any] = {"form": form, "identity": identity, "provider": label}
    wait = signup_wait(request=request)
    if request.method == "POST" and not wait and form.is_valid():
        wait = signup_take(request=request)
        if not wait:
            try:
                user = identity_account_create(
                    identity=identity,
                    username=form.cleaned_data["username"],
                    email=form.cleaned_data["email"],
                    now=timezone.now(),
                )
            except IntegrityError:
                if identity_account(identity=identity) is not None:
                    pending_forget(request)
                    messages.info(request, HAS_ACCOUNT_NOW.format(provider=label))
                    return redirect("accounts:login")
                form.add_error(None, TAKEN_MEANWHILE)
                return render(request, "registration/oauth_signup.html", context, status=409)
            pending_forget(request)
            login(request, user, backend=BACKEND)
            messages.success(request, WELCOME.format(name=user.username))
            if verification_mail_send(user=user):
                messages.info(request, VERIFY_SENT.format(email=user.email, days=VERIFY_LINK_DAYS))
            return redirect(settings.LOGIN_REDIRECT_URL)
    elif request.method == "POST" and not wait and form.has_error("email", code="verified_elsewhere"):
        signup_take(request=request)  # as sign-up counts it: the form cannot test address after address
    if wait:
        context["refused"] = signup_refused_message(wait)
        response = render(
            request, "registration/oauth_signup.html", context, status=429 if request.method == "POST" else 200
        )
        response["Retry-After"] = str(wait)
        return response
    return render(request, "registration/oauth_signup.html", context, status=400 if form.errors else 200)


@login_required
@require_POST
def oauth_unlink(request: HttpRequest, provider: str) -> HttpResponse:
    """*Settings*' "Unlink": refused when the link is the only way into the account."""
    if provider not in OAuthProvider.values:
        raise Http404("No such provider.")
    user = request.user
    assert isinstance(user, User)
    try:
        identity_unlink(user=user, provider=provider)
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
    else:
        messages.success(request, UNLINKED.format(provider=provider_label(provider)))
    return redirect(_settings_linked())
