from __future__ import annotations

from urllib.parse import urlencode

from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.forms import Form
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.utils.encoding import uri_to_iri
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from accounts import two_factor
from accounts.deletion import account_delete
from accounts.forms import (
    WRONG_CODE,
    AccountDeleteForm,
    AccountSettingsForm,
    LoginForm,
    PasswordAgainForm,
    PasswordResetMailForm,
    SignUpForm,
    TimeZoneForm,
    TwoFactorCodeForm,
    TwoFactorSetupForm,
)
from accounts.mail import (
    password_reset_allowed,
    password_reset_enqueue,
    verification_link_due,
    verification_link_wait,
    verification_mail_send,
)
from accounts.models import User
from accounts.oauth import oauth_form_action
from accounts.sessions import session_rekeyed, sessions_end, sessions_of
from accounts.signals import PasswordSetBy, password_set
from accounts.throttling import (
    lockout_response,
    login_warning,
    signup_refused_message,
    signup_take,
    signup_wait,
    wait_words,
)
from accounts.validators import EMAIL_VERIFIED_ELSEWHERE
from accounts.verification import VERIFY_LINK_DAYS, VerificationError, address_verify, email_verify

VERIFY_SENT = "We sent a link to {email}. Follow it within {days} days to confirm the address is yours."
VERIFY_RESEND_REFUSED = "You asked for several links in a short time. Try again in {wait}."
VERIFY_CHANGE_REFUSED = (
    "You changed your address several times in a short time, and each change mails a link. "
    "Nothing was saved: try again in {wait}."
)
VERIFY_NOTHING_TO_SEND = "There is no address to check: add one above first."


@method_decorator(oauth_form_action, name="dispatch")  # its "Sign in with Discord" buttons
class LoginView(auth_views.LoginView):
    """Django's login, which warns when one more failure would lock the account or the address."""

    redirect_authenticated_user = True
    authentication_form = LoginForm

    def form_invalid(self, form: Form) -> HttpResponse:
        warning = login_warning(self.request, {"username": form.data.get("username", "")})
        return self.render_to_response(self.get_context_data(form=form, lockout_warning=warning))


@oauth_form_action
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
            if verification_mail_send(user=user):
                messages.info(request, VERIFY_SENT.format(email=user.email, days=VERIFY_LINK_DAYS))
            return redirect("home")
    elif request.method == "POST" and not wait and form.has_error("email", code="verified_elsewhere"):
        # Counted like a sign-up, so the form cannot test address after address for accounts.
        signup_take(request=request)
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


ACCOUNT_DELETED = "Your account is deleted."
ACCOUNT_DELETED_MAILED = " A mail to its verified address confirms it."


@login_required
@oauth_form_action  # its "Link Discord" buttons
def account_settings(request: HttpRequest) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)
    address = _address_status(user)  # before the form writes what was typed onto the user
    form = AccountSettingsForm(request.POST or None, instance=user)
    if request.method == "POST" and form.is_valid():
        # A new address is unverified by itself (User.email_verified names the old one), so
        # saving it mails a link: counted under the same limit as "Send the link again".
        sends_link = "email" in form.changed_data and verification_link_due(user=form.instance)
        if sends_link and (wait := verification_link_wait(user=user)):
            form.add_error("email", VERIFY_CHANGE_REFUSED.format(wait=wait_words(wait)))
            context = {"form": form, "address": address, **_sessions(request, user)}
            response = render(request, "accounts/settings.html", context, status=429)
            response["Retry-After"] = str(wait)
            return response
        try:
            with transaction.atomic():
                user = form.save()
        except IntegrityError:  # another account verified the address since the form checked it
            form.add_error("email", EMAIL_VERIFIED_ELSEWHERE)
            context = {"form": form, "address": address, **_sessions(request, user)}
            return render(request, "accounts/settings.html", context)
        messages.success(request, "Your settings are saved.")
        if sends_link and verification_mail_send(user=user):
            messages.info(request, VERIFY_SENT.format(email=user.email, days=VERIFY_LINK_DAYS))
        return redirect("accounts:settings")
    return render(request, "accounts/settings.html", {"form": form, "address": address, **_sessions(request, user)})


ZONE_SAVED = "Times are now shown in {zone}."


@login_required
@require_POST
def time_zone_change(request: HttpRequest) -> HttpResponse:
    """*Settings* → *Time zone*: saved, or the settings page again with the form's error (400) and nothing changed."""
    user = request.user
    assert isinstance(user, User)
    form = TimeZoneForm(request.POST, instance=user)
    if form.is_valid():
        user = form.save()
        zone = user.time_zone or f"the site's time zone ({settings.TIME_ZONE})"
        messages.success(request, ZONE_SAVED.format(zone=zone))
        return redirect(f"{reverse('accounts:settings')}#zone-heading")
    user.refresh_from_db(fields=["time_zone"])  # the form set the typed name on the account; nothing was saved
    context = {
        "form": AccountSettingsForm(instance=user),
        "zone_form": form,
        "address": _address_status(user),
        **_sessions(request, user),
    }
    return render(request, "accounts/settings.html", context, status=400)


def _sessions(request: HttpRequest, user: User) -> dict[str, object]:
    """The account's sessions for *Settings*, this one marked, and its profile's address."""
    return {
        "sessions": sessions_of(user=user, now=timezone.now()),
        "this_session": request.session.session_key,
        "profile_path": uri_to_iri(user.get_absolute_url()),  # shown as typed: /players/Zoë/, not Zo%C3%AB
        "two_factor": _two_factor_status(user),
    }


def _two_factor_status(user: User) -> dict[str, object]:
    """*Settings*' "Two-factor sign-in": on since when, recovery codes left, whether it may be turned off."""
    return {
        "on_since": two_factor.turned_on_at(user=user),
        "codes_left": two_factor.recovery_codes_left(user=user),
        "required": settings.TWO_FACTOR_FOR_STAFF and two_factor.is_staff_account(user),
        "form": PasswordAgainForm(user=user),
    }


def _settings_page(request: HttpRequest, user: User, *, two_factor_form: Form, status: int) -> HttpResponse:
    """*Settings* again, with a refused two-factor change's errors under its section."""
    context = {
        "form": AccountSettingsForm(instance=user),
        "address": _address_status(user),
        "two_factor_form": two_factor_form,
        **_sessions(request, user),
    }
    return render(request, "accounts/settings.html", context, status=status)


def _address_status(user: User) -> dict[str, object]:
    """The saved address and whether it is verified, for the settings page's "Email address"."""
    return {"email": user.email, "verified": user.has_verified_email, "days": VERIFY_LINK_DAYS}


@login_required
@require_POST
@oauth_form_action
def verification_resend(request: HttpRequest) -> HttpResponse:
    """ "Send the link again": a new link to the account's unverified address, a few an hour."""
    user = request.user
    assert isinstance(user, User)
    if not user.email or user.has_verified_email:
        messages.info(request, VERIFY_NOTHING_TO_SEND if not user.email else "Your address is verified already.")
        return redirect("accounts:settings")
    if wait := verification_link_wait(user=user):
        context = {
            "form": AccountSettingsForm(instance=user),
            "address": _address_status(user),
            "resend_refused": VERIFY_RESEND_REFUSED.format(wait=wait_words(wait)),
            **_sessions(request, user),
        }
        response = render(request, "accounts/settings.html", context, status=429)
        response["Retry-After"] = str(wait)
        return response
    verification_mail_send(user=user)
    messages.info(request, VERIFY_SENT.format(email=user.email, days=VERIFY_LINK_DAYS))
    return redirect("accounts:settings")


def verify_email(request: HttpRequest, token: str) -> HttpResponse:
    """The page a verification link opens: no login needed, the signed link is the proof."""
    try:
        user = email_verify(token=token)
    except VerificationError as exc:
        return render(request, "registration/email_verify_failed.html", {"reason": str(exc)}, status=400)
    return render(request, "registration/email_verified.html", {"verified": user})


class PasswordResetRequestView(auth_views.PasswordResetView):
    """ "Forgot your password?": the same answer whatever was typed, and nothing looked up here."""

    form_class = PasswordResetMailForm
    success_url = reverse_lazy("accounts:password_reset_done")

    def form_valid(self, form: Form) -> HttpResponse:
        email = form.cleaned_data["email"]
        # Over a limit (per address or per client) the answer is the same "if an account
        # has this address, we sent it a link" page, and nothing is sent. A refusal would
        # tell the asker that someone asked for this address before, and the page would
        # no longer be the same for every address.
        if password_reset_allowed(request=self.request, email=email):
            password_reset_enqueue(email=email)
        return HttpResponseRedirect(self.get_success_url())


class PasswordResetSetView(auth_views.PasswordResetConfirmView):
    """A new password from the mailed link. The link went to the account's address, so
    following it verifies that address too (the token is bound to it: a changed address
    voids the link), unless another account verified it first. Django ends the account's
    sessions; ``password_set`` ends the rest."""

    success_url = reverse_lazy("accounts:password_reset_complete")

    @transaction.atomic
    def form_valid(self, form: Form) -> HttpResponse:
        response = super().form_valid(form)
        user = self.user
        if user is not None and user.email and not user.has_verified_email:
            address_verify(user=user)  # refused, and harmless, when another account verified it
        if user is not None:
            password_set.send(sender=User, user=user, how=PasswordSetBy.RESET)
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's password change (other sessions end, this one stays), and ``password_set``."""

    success_url = reverse_lazy("accounts:password_change_done")

    @transaction.atomic
    def form_valid(self, form: Form) -> HttpResponse:
        old_key = self.request.session.session_key
        response = super().form_valid(form)  # the session's key is cycled: its row follows
        user = self.request.user
        assert isinstance(user, User)
        session_rekeyed(old_key=old_key, request=self.request)
        ended = sessions_end(user=user, keep=self.request.session.session_key)
        if ended:
            messages.info(self.request, _signed_out(ended))
        password_set.send(sender=User, user=user, how=PasswordSetBy.CHANGE)
        return response


def _signed_out(count: int) -> str:
    return f"Signed out of {count} other session{'s' if count != 1 else ''}."


@login_required
@require_POST
def sessions_sign_out_others(request: HttpRequest) -> HttpResponse:
    """*Settings*' "Sign out everywhere else": every session of the account but this one ends."""
    user = request.user
    assert isinstance(user, User)
    ended = sessions_end(user=user, keep=request.session.session_key)
    messages.success(request, _signed_out(ended) if ended else "No other session was signed in.")
    return redirect(f"{reverse('accounts:settings')}#sessions-heading")


@login_required
@require_http_methods(["GET", "POST"])
def account_delete_page(request: HttpRequest) -> HttpResponse:
    """*Settings*' "Delete my account": the password and a box, then the account is pseudonymised
    (``accounts.deletion``) and this browser signed out."""
    user = request.user
    assert isinstance(user, User)
    form = AccountDeleteForm(request.POST if request.method == "POST" else None, user=user)
    if request.method == "POST" and form.is_valid():
        mailed = user.has_verified_email
        try:
            account_delete(user=user, by=user, now=timezone.now())
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            logout(request)
            messages.success(request, ACCOUNT_DELETED + (ACCOUNT_DELETED_MAILED if mailed else ""))
            return redirect("home")
    status = 400 if form.errors else 200
    return render(request, "accounts/delete.html", {"form": form}, status=status)


# -- Two-factor sign-in (accounts.two_factor) ----------------------------------------------

TWO_FACTOR_ON = "Two-factor sign-in is on. Keep your recovery codes somewhere safe, away from your phone."
RECOVERY_USED = "You signed in with a recovery code: {left} left. Make new ones in Settings if you are running short."
CODE_USED = "That code was used already, and each works once: type the next one your app shows (within 30 seconds)."
STAFF_KEEP_TWO_FACTOR = "Moderators and administrators must keep two-factor sign-in on."


def _next_page(request: HttpRequest) -> str:
    """Where to go once a code is given: ``next`` if it is a page of this site, else home."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
        return target
    return reverse("home")


@login_required
@require_http_methods(["GET", "POST"])
def two_factor_verify(request: HttpRequest) -> HttpResponse:
    """The second step of a sign-in: the app's code or a recovery code. Wrong codes count as
    failed logins (the same limits as wrong passwords)."""
    user = request.user
    assert isinstance(user, User)
    next_page = _next_page(request)
    state = two_factor.session_state(request)
    if state == two_factor.SETUP:
        return redirect(f"{reverse('accounts:two_factor_setup')}?{urlencode({'next': next_page})}")
    if state != two_factor.VERIFY:
        return redirect(next_page)
    form = TwoFactorCodeForm(request.POST or None)
    warning = None
    if request.method == "POST":
        credentials = {"username": user.get_username()}
        AxesProxyHandler.update_request(request)
        if not AxesProxyHandler.is_allowed(request, credentials):
            return lockout_response(request, None, credentials)
        if form.is_valid():
            used = two_factor.code_check(user=user, code=form.cleaned_data["code"])
            if used is not None:
                two_factor.verified(request)
                if used == "recovery":
                    messages.warning(request, RECOVERY_USED.format(left=two_factor.recovery_codes_left(user=user)))
                return redirect(next_page)
            two_factor.code_failed(request=request, user=user)
            spent = two_factor.code_used_already(user=user, code=form.cleaned_data["code"])
            form.add_error("code", CODE_USED if spent else WRONG_CODE)
            warning = login_warning(request, credentials)
    context = {"form": form, "next": next_page, "lockout_warning": warning}
    return render(request, "registration/two_factor_verify.html", context, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def two_factor_setup(request: HttpRequest) -> HttpResponse:
    """Add an authenticator app: its secret as a QR code and as text, then its first code."""
    user = request.user
    assert isinstance(user, User)
    if two_factor.enrolled(user):
        if two_factor.session_state(request) == two_factor.VERIFY:
            return redirect("accounts:two_factor_verify")
        messages.info(request, "Two-factor sign-in is on already.")
        return redirect(f"{reverse('accounts:settings')}#two-factor-heading")
    form = TwoFactorSetupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        codes = two_factor.app_device_confirm(user=user, code=form.cleaned_data["code"])
        if codes is not None:
            two_factor.verified(request)
            request.session[two_factor.FRESH_CODES_KEY] = codes
            messages.success(request, TWO_FACTOR_ON)
            return redirect(f"{reverse('accounts:two_factor_codes')}?{urlencode({'next': _next_page(request)})}")
        form.add_error("code", WRONG_CODE)
    device = two_factor.app_device_pending(user=user)
    context = {
        "form": form,
        "qr": two_factor.qr_svg(device),
        "secret": two_factor.secret_words(device),
        "required": two_factor.session_state(request) == two_factor.SETUP,
        "next": _next_page(request),
    }
    return render(request, "registration/two_factor_setup.html", context, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET"])
def two_factor_codes(request: HttpRequest) -> HttpResponse:
    """New recovery codes, shown once: the page after they are made."""
    codes = request.session.pop(two_factor.FRESH_CODES_KEY, None)
    if not codes:
        return redirect(f"{reverse('accounts:settings')}#two-factor-heading")
    response = render(request, "registration/two_factor_codes.html", {"codes": codes, "next": _next_page(request)})
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def two_factor_codes_new(request: HttpRequest) -> HttpResponse:
    """*Settings*' "New recovery codes", with the password: the old codes stop working."""
    user = request.user
    assert isinstance(user, User)
    form = PasswordAgainForm(request.POST, user=user)
    if not two_factor.enrolled(user):
        messages.info(request, "Two-factor sign-in is off: there are no recovery codes to replace.")
        return redirect(f"{reverse('accounts:settings')}#two-factor-heading")
    if not form.is_valid():
        return _settings_page(request, user, two_factor_form=form, status=400)
    request.session[two_factor.FRESH_CODES_KEY] = two_factor.recovery_codes_new(user=user)
    return redirect("accounts:two_factor_codes")


@login_required
@require_POST
def two_factor_off(request: HttpRequest) -> HttpResponse:
    """*Settings*' "Turn off", with the password; refused to moderators and administrators."""
    user = request.user
    assert isinstance(user, User)
    form = PasswordAgainForm(request.POST, user=user)
    if settings.TWO_FACTOR_FOR_STAFF and two_factor.is_staff_account(user):
        form.add_error(None, STAFF_KEEP_TWO_FACTOR)
        return _settings_page(request, user, two_factor_form=form, status=400)
    if not form.is_valid():
        return _settings_page(request, user, two_factor_form=form, status=400)
    two_factor.two_factor_off(user=user)
    two_factor.sign_in_state_after_off(request)
    messages.success(request, "Two-factor sign-in is off. Your password alone signs you in now.")
    return redirect(f"{reverse('accounts:settings')}#two-factor-heading")
