"""Two-factor sign-in: a code from an authenticator app, or a one-time recovery code
(docs/security.md, "Two-factor sign-in").

The devices are django-otp's: a ``TOTPDevice`` (RFC 6238, 30-second codes of 6 digits) and a
``StaticDevice`` holding the account's recovery codes, each deleted when used.

Every way in (the sign-in form, the admin's, a test's ``force_login``, a provider's callback)
goes through ``django.contrib.auth.login``, whose ``user_logged_in`` writes the session's
*state* here. ``TwoFactorMiddleware`` then lets a session whose state asks for something
reach only the two-factor pages and "Sign out":

- ``VERIFY``: the account has two-factor sign-in on, and this session has not given a code;
- ``SETUP``: a moderator or administrator without it (``TWO_FACTOR_FOR_STAFF``), sent to set it up;
- ``VERIFIED``: this session gave a code (or set up the device);
- ``NONE``: nothing is asked.

A ``NONE`` session is looked at again every ``RECHECK_EVERY``, so a player made moderator,
or one who turns two-factor sign-in on elsewhere, is asked within minutes; until then the
middleware reads the session only. Wrong codes count as failed logins in django-axes, under
the same limits as wrong passwords (``accounts.throttling``).
"""

from __future__ import annotations

import secrets
import time
from base64 import b32decode, b32encode
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import segno
from django.conf import settings
from django.contrib.auth import SESSION_KEY, user_login_failed
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import User
from accounts.roles import is_moderator
from accounts.sessions import session_rekeyed
from core.middleware import DATABASE_ERRORS

STATE_KEY = "_two_factor"  # in the session: [state, when it was last worked out (a POSIX time)]
VERIFY = "verify"
SETUP = "setup"
VERIFIED = "verified"
NONE = "none"
RECHECK_EVERY = timedelta(minutes=5)

RECOVERY_CODES = 10
APP_DEVICE = "Authenticator app"
RECOVERY_DEVICE = "Recovery codes"
FRESH_CODES_KEY = "_two_factor_fresh_codes"  # shown once, on the page after they are made

ASK_VERIFY = "Enter the code from your authenticator app to finish signing in."
ASK_SETUP = "Moderators and administrators sign in with a second factor. Set up an authenticator app to go on."


# -- Who needs what -------------------------------------------------------------------------


def is_staff_account(user: User) -> bool:
    """Moderators and administrators: the accounts ``TWO_FACTOR_FOR_STAFF`` applies to."""
    return bool(user.is_staff or user.is_superuser or is_moderator(user))


def enrolled(user: User) -> bool:
    """Whether the account has two-factor sign-in on (a confirmed authenticator app)."""
    return bool(TOTPDevice.objects.filter(user=user, confirmed=True).exists())


def state_for(user: User) -> str:
    """What a session of ``user`` that has given no code must do first."""
    if enrolled(user):
        return VERIFY
    if settings.TWO_FACTOR_FOR_STAFF and is_staff_account(user):
        return SETUP
    return NONE


def session_state(request: HttpRequest) -> str:
    """The session's state, worked out again when it is missing or a ``NONE`` is old."""
    state = _stored_state(request)
    if state is not None:
        return state
    user = request.user
    assert isinstance(user, User)
    state = state_for(user)
    _state_set(request, state)
    return state


def _stored_state(request: HttpRequest) -> str | None:
    """The state the session holds, if it still holds: read from the session alone, no query."""
    stored = request.session.get(STATE_KEY)
    if not (isinstance(stored, list) and len(stored) == 2):
        return None
    state, checked = stored
    if state == VERIFIED:
        return VERIFIED
    if state in (VERIFY, SETUP, NONE) and time.time() - float(checked) < RECHECK_EVERY.total_seconds():
        return str(state)
    return None


def _state_set(request: HttpRequest, state: str) -> None:
    request.session[STATE_KEY] = [state, time.time()]


def mark_sign_in(sender: Any, request: HttpRequest | None, user: User, **kwargs: Any) -> None:
    """The ``user_logged_in`` receiver: a new sign-in has given no code yet."""
    if request is not None and hasattr(request, "session"):
        _state_set(request, state_for(user))


def verified(request: HttpRequest) -> None:
    """This session gave a right code: its key changes (the old one proved less) and nothing more is asked."""
    old_key = request.session.session_key
    request.session.cycle_key()
    session_rekeyed(old_key=old_key, request=request)
    _state_set(request, VERIFIED)


# -- The gate -------------------------------------------------------------------------------


class TwoFactorMiddleware:
    """Sends a signed-in session that owes a code, or a set-up, to the page that takes it.

    The API answers 403 in JSON, htmx requests get ``HX-Redirect``, pages a redirect that
    comes back to where the reader was going.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        state = NONE
        session = getattr(request, "session", None)
        if session is not None and SESSION_KEY in session:  # signed in: the session says so, no query
            try:
                # The state the session holds, read without loading the account; worked out
                # (a query or two) only when it is missing or due for another look.
                state = _stored_state(request) or (session_state(request) if request.user.is_authenticated else NONE)
            except DATABASE_ERRORS:
                # The database is down: the view fails on it too, and answers 503 (core.middleware).
                return self.get_response(request)
        request.two_factor_owed = state in (VERIFY, SETUP)  # type: ignore[attr-defined]  # base.html's header
        if request.two_factor_owed and not _open_to_all(request.path_info):  # type: ignore[attr-defined]
            return _sent_on(request, state)
        return self.get_response(request)


def _open_to_all(path: str) -> bool:
    """The pages a session that owes a code can reach: the code's, the set-up's and "Sign out"."""
    return path in (
        reverse("accounts:two_factor_verify"),
        reverse("accounts:two_factor_setup"),
        reverse("accounts:logout"),
        reverse("admin:logout"),
    )


def _sent_on(request: HttpRequest, state: str) -> HttpResponse:
    page = reverse("accounts:two_factor_verify" if state == VERIFY else "accounts:two_factor_setup")
    message = ASK_VERIFY if state == VERIFY else ASK_SETUP
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": message, "code": f"two_factor_{state}"}, status=403)
    if request.method == "GET" and not request.headers.get("HX-Request"):
        page = f"{page}?{urlencode({'next': request.get_full_path()})}"
    if request.headers.get("HX-Request"):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = page
        return response
    return HttpResponseRedirect(page)


# -- Devices --------------------------------------------------------------------------------


def app_device_pending(*, user: User) -> TOTPDevice:
    """The authenticator app being set up: a new secret, or the one already shown (a reload
    keeps the QR code the reader may have scanned)."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("pk").first()
    if device is None:
        device = TOTPDevice.objects.create(user=user, name=APP_DEVICE, confirmed=False)
    return device


@transaction.atomic
def app_device_enrol(*, user: User, secret: str) -> bool:
    """Turn two-factor sign-in on with a known base32 ``secret``, without a first code: for the
    demo's staff accounts, whose secret is as public as their passwords. False if it was on."""
    if enrolled(user):
        return False
    TOTPDevice.objects.filter(user=user).delete()
    key = b32decode(secret.replace(" ", "").upper()).hex()
    TOTPDevice.objects.create(user=user, name=APP_DEVICE, key=key, confirmed=True)
    recovery_codes_new(user=user)
    return True


def secret_words(device: TOTPDevice) -> str:
    """The device's secret in base32, in groups of four, for typing into an app by hand."""
    key = b32encode(device.bin_key).decode().rstrip("=")
    return " ".join(key[i : i + 4] for i in range(0, len(key), 4))


def qr_svg(device: TOTPDevice) -> str:
    """The secret's ``otpauth://`` address as an SVG QR code, drawn here: no outside service sees it."""
    code = segno.make(device.config_url, error="m")
    svg: str = code.svg_inline(border=4, dark="#000", light="#fff", omitsize=True, title="QR code of the secret")
    return svg


@transaction.atomic
def app_device_confirm(*, user: User, code: str) -> list[str] | None:
    """Turn two-factor sign-in on with the pending device if ``code`` is right: returns the new
    recovery codes, or None for a wrong code (nothing changes)."""
    device = TOTPDevice.objects.select_for_update().filter(user=user, confirmed=False).order_by("pk").first()
    if device is None or not device.verify_token(_digits(code)):
        return None
    TOTPDevice.objects.filter(user=user).exclude(pk=device.pk).delete()
    device.confirmed = True
    device.save(update_fields=["confirmed"])
    return recovery_codes_new(user=user)


@transaction.atomic
def recovery_codes_new(*, user: User) -> list[str]:
    """Ten new recovery codes (``abcd-efgh``, 40 random bits each); the old ones stop working."""
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=RECOVERY_DEVICE, confirmed=True)
    codes = [_recovery_code() for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=_normal(code)) for code in codes)
    return codes


def recovery_codes_left(*, user: User) -> int:
    return int(StaticToken.objects.filter(device__user=user).count())


def _recovery_code() -> str:
    raw = b32encode(secrets.token_bytes(5)).decode().lower()
    return f"{raw[:4]}-{raw[4:]}"


def _normal(code: str) -> str:
    """A code as typed, without spaces or hyphens, in lower case: how recovery codes are kept."""
    return "".join(code.split()).replace("-", "").lower()


def _digits(code: str) -> str:
    return "".join(code.split())


@transaction.atomic
def code_check(*, user: User, code: str) -> str | None:
    """Whether ``code`` is the app's current code or an unused recovery code: returns which
    ("app" or "recovery", the recovery code then used up), or None. The devices are locked,
    so two requests cannot both use one code."""
    devices = list(TOTPDevice.objects.select_for_update().filter(user=user, confirmed=True))
    for device in devices:
        if _digits(code).isdigit() and device.verify_token(_digits(code)):
            return "app"
    for static in StaticDevice.objects.select_for_update().filter(user=user, confirmed=True):
        if static.verify_token(_normal(code)):
            return "recovery"
    return None


def code_used_already(*, user: User, code: str) -> bool:
    """Whether a refused ``code`` is one the app showed, refused only because it was used
    (each works once): the reader is told to wait for the next rather than to check the clock."""
    digits = _digits(code)
    if not (digits.isdigit() and len(digits) <= 8):
        return False
    for device in TOTPDevice.objects.filter(user=user, confirmed=True):
        totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
        totp.time = time.time()
        if totp.verify(int(digits), device.tolerance):
            return True
    return False


def code_failed(*, request: HttpRequest, user: User) -> None:
    """A wrong code counts as a failed login of the account, from this address (django-axes)."""
    user_login_failed.send(sender=__name__, credentials={"username": user.get_username()}, request=request)


@transaction.atomic
def two_factor_off(*, user: User) -> None:
    """Remove the account's app and recovery codes."""
    TOTPDevice.objects.filter(user=user).delete()
    StaticDevice.objects.filter(user=user).delete()


@transaction.atomic
def two_factor_reset(*, accounts: QuerySet[User]) -> list[User]:
    """Turn two-factor sign-in off for those of ``accounts`` that have it on (a lost phone),
    in a fixed number of statements however many are chosen; returns them."""
    enrolled_ids = TOTPDevice.objects.filter(confirmed=True).values("user_id")
    reset = list(accounts.filter(pk__in=enrolled_ids).order_by("pk"))
    TOTPDevice.objects.filter(user__in=reset).delete()
    StaticDevice.objects.filter(user__in=reset).delete()
    return reset


def forget_devices(sender: Any, user: User, **kwargs: Any) -> None:
    """The ``account_deleted`` receiver: a deleted account's app secret and recovery codes go."""
    two_factor_off(user=user)


def sign_in_state_after_off(request: HttpRequest) -> None:
    _state_set(request, NONE)


def turned_on_at(*, user: User) -> Any:
    device = TOTPDevice.objects.filter(user=user, confirmed=True).only("created_at").first()
    return device.created_at if device is not None else None
