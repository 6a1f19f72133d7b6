"""Two-factor sign-in (accounts/two_factor.py): setting up an app, signing in with its code or a
recovery code, wrong codes under the login limits, and moderators kept out until they use it.

Codes are computed by pyotp, an implementation independent of django-otp, from the secret the
set-up page shows; time_machine moves the clock by whole 30-second steps so each code is new.
"""

from __future__ import annotations

import re
import time
from base64 import b32encode
from contextlib import contextmanager

import pyotp
import pytest
import time_machine
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import two_factor
from accounts.forms import WRONG_CODE, WRONG_PASSWORD
from audit.models import AuditEntry
from tests.factories import PASSWORD, UserFactory, moderator_account

pytestmark = pytest.mark.django_db

LOGIN = reverse("accounts:login")
VERIFY = reverse("accounts:two_factor_verify")
SETUP = reverse("accounts:two_factor_setup")
SETTINGS = reverse("accounts:settings")
IP = "198.51.100.7"
START = 1_900_000_000.0  # a moment on a 30-second boundary, so each step below is a new code


@contextmanager
def at(step: int):
    """The clock ``step`` 30-second steps after START: each step has a new code."""
    with time_machine.travel(START + 30 * step + 1, tick=False):
        yield


def secret_shown(response) -> str:
    match = re.search(r'<code class="secret" id="secret">([A-Z2-7 ]+)</code>', response.text)
    assert match, "the set-up page shows the secret as text"
    return match.group(1).replace(" ", "")


def set_up(client) -> tuple[pyotp.TOTP, list[str]]:
    """Sets up the signed-in account's app through the pages; returns its code maker and recovery codes."""
    with at(0):
        page = client.get(SETUP)
        assert page.status_code == 200
        app = pyotp.TOTP(secret_shown(page))
        done = client.post(SETUP, {"code": app.now()})
    assert done.status_code == 302
    codes_page = client.get(done["Location"])
    codes = re.findall(r"<li><code>([a-z2-7]{4}-[a-z2-7]{4})</code></li>", codes_page.text)
    assert len(codes) == two_factor.RECOVERY_CODES
    return app, codes


def sign_in(client, username: str, password: str = PASSWORD, ip: str = IP):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip)


def enrolled_player(client, username: str = "alice"):
    user = UserFactory(username=username)
    client.force_login(user)
    app, codes = set_up(client)
    client.logout()
    return user, app, codes


# -- Setting it up ---------------------------------------------------------------------------


def test_setup_shows_a_qr_code_of_the_secret_drawn_here(player_client, player):
    page = player_client.get(SETUP)

    assert page.status_code == 200
    assert "<svg" in page.text and "QR code of the secret" in page.text
    device = TOTPDevice.objects.get(user=player, confirmed=False)
    assert secret_shown(page) == b32encode(device.bin_key).decode().rstrip("=")
    # A reload shows the same secret: the reader may have scanned it already.
    assert secret_shown(player_client.get(SETUP)) == secret_shown(page)
    assert not two_factor.enrolled(player)


def test_setup_with_the_apps_code_turns_it_on_and_shows_recovery_codes_once(player_client, player):
    _app, codes = set_up(player_client)

    assert two_factor.enrolled(player)
    assert two_factor.recovery_codes_left(user=player) == 10
    assert len(set(codes)) == 10
    # Shown once: the page afterwards goes back to Settings.
    assert player_client.get(reverse("accounts:two_factor_codes")).status_code == 302
    settings_page = player_client.get(SETTINGS)
    assert "10 recovery codes left" in settings_page.text


@pytest.mark.parametrize(
    ("typed", "error"),
    [("", "This field is required."), ("12345", "Type the 6 digits"), ("abcdef", "Type the 6 digits")],
)
def test_setup_refuses_a_code_of_the_wrong_shape(player_client, player, typed, error):
    player_client.get(SETUP)
    response = player_client.post(SETUP, {"code": typed})

    assert response.status_code == 400
    assert error in response.text
    assert not two_factor.enrolled(player)


def test_setup_refuses_a_wrong_code_and_keeps_the_secret(player_client, player):
    with at(0):
        page = player_client.get(SETUP)
        app = pyotp.TOTP(secret_shown(page))
        wrong = f"{(int(app.now()) + 1) % 1_000_000:06d}"
        response = player_client.post(SETUP, {"code": wrong})

    assert response.status_code == 400
    assert WRONG_CODE in response.text
    assert not two_factor.enrolled(player)
    assert secret_shown(response) == secret_shown(page)


# -- Signing in ------------------------------------------------------------------------------


def test_password_alone_opens_nothing_until_the_code(client):
    _user, app, _ = enrolled_player(client)

    with at(1):
        response = sign_in(client, "alice")
        assert response.status_code == 302
        home = client.get(reverse("home"))
        assert home.status_code == 302
        assert home["Location"].startswith(VERIFY)
        # Nor anything else a signed-in player has: Settings, the API, an htmx poll.
        assert client.get(SETTINGS)["Location"].startswith(VERIFY)
        api = client.get(reverse("api:me"))
        assert api.status_code == 403
        assert api.json()["code"] == "two_factor_verify"
        assert client.get(SETTINGS, HTTP_HX_REQUEST="true")["HX-Redirect"] == VERIFY

        done = client.post(VERIFY, {"code": app.now(), "next": SETTINGS}, REMOTE_ADDR=IP)

    assert done.status_code == 302
    assert done["Location"] == SETTINGS
    assert client.get(SETTINGS).status_code == 200
    assert client.get(reverse("api:me")).status_code == 200


def test_a_code_works_once(client):
    _user, app, _ = enrolled_player(client)
    with at(1):
        sign_in(client, "alice")
        code = app.now()
        assert client.post(VERIFY, {"code": code}, REMOTE_ADDR=IP).status_code == 302
        client.logout()
        sign_in(client, "alice")
        again = client.post(VERIFY, {"code": code}, REMOTE_ADDR=IP)

    assert again.status_code == 400
    assert "That code was used already" in again.text
    assert WRONG_CODE not in again.text


def test_a_recovery_code_signs_in_once_and_says_how_many_are_left(client):
    user, _, codes = enrolled_player(client)

    with at(2):
        sign_in(client, "alice")
        used = client.post(VERIFY, {"code": codes[3].upper().replace("-", " ")}, REMOTE_ADDR=IP, follow=True)
        assert "9 left" in used.text
        client.logout()
        sign_in(client, "alice")
        again = client.post(VERIFY, {"code": codes[3]}, REMOTE_ADDR=IP)

    assert again.status_code == 400
    assert two_factor.recovery_codes_left(user=user) == 9


def test_the_code_page_leaves_out_an_outside_next(client):
    _, app, _ = enrolled_player(client)
    with at(1):
        sign_in(client, "alice")
        done = client.post(VERIFY, {"code": app.now(), "next": "https://elsewhere.example/"}, REMOTE_ADDR=IP)

    assert done["Location"] == reverse("home")


def test_wrong_codes_count_as_failed_logins_and_lock_like_passwords(client, settings):
    _, app, _ = enrolled_player(client)
    with at(1):
        sign_in(client, "alice")
        for _attempt in range(settings.AXES_FAILURE_LIMIT - 1):
            response = client.post(VERIFY, {"code": "000000"}, REMOTE_ADDR=IP)
            assert response.status_code == 400
        assert "One more failed attempt locks this account" in response.text
        client.post(VERIFY, {"code": "000000"}, REMOTE_ADDR=IP)
        locked = client.post(VERIFY, {"code": app.now()}, REMOTE_ADDR=IP)
        assert locked.status_code == 429
        assert "Retry-After" in locked
        # The same lock holds the password: signing in again from here waits too.
        client.logout()
        assert sign_in(client, "alice").status_code == 429
    assert client.get(reverse("home")).status_code == 200  # signed out, the site stays open


def test_every_other_way_in_asks_for_the_code_too(client):
    """force_login stands for any way in that calls Django's login (the admin's form, a provider)."""
    user, _app, _ = enrolled_player(client)
    client.force_login(user)

    assert client.get(reverse("home"))["Location"].startswith(VERIFY)
    admin_login = client.post(reverse("admin:login"), {"username": "alice", "password": PASSWORD}, REMOTE_ADDR=IP)
    assert admin_login.status_code == 302
    assert client.get(reverse("home"))["Location"].startswith(VERIFY)


def test_a_session_signed_in_before_turning_it_on_elsewhere_is_asked_within_minutes(client, player):
    client.force_login(player)
    other = type(client)()
    with at(0):
        assert client.get(SETTINGS).status_code == 200
        other.force_login(player)
        set_up(other)
        # This session was looked at a moment ago: it goes on for now.
        assert client.get(SETTINGS).status_code == 200
    with time_machine.travel(START + two_factor.RECHECK_EVERY.total_seconds() + 60, tick=False):
        assert client.get(SETTINGS)["Location"].startswith(VERIFY)


def test_signing_out_stays_open_to_a_session_that_owes_a_code(client):
    enrolled_player(client)
    with at(1):
        sign_in(client, "alice")
        client.post(reverse("accounts:logout"))
    assert "_auth_user_id" not in client.session


# -- Moderators and administrators ------------------------------------------------------------


@pytest.fixture
def required(settings):
    settings.TWO_FACTOR_FOR_STAFF = True


@pytest.mark.usefixtures("required")
@pytest.mark.parametrize("who", ["moderator", "staff", "superuser"])
def test_staff_without_it_are_sent_to_set_it_up(client, who):
    if who == "moderator":
        user = moderator_account("mod")
    else:
        user = UserFactory(username="boss", is_staff=True, is_superuser=who == "superuser")
    sign_in(client, user.username)

    for page in (reverse("moderation"), reverse("admin:index"), reverse("home"), SETTINGS):
        response = client.get(page)
        assert response.status_code == 302, page
        assert response["Location"].startswith(SETUP), page
    setup_page = client.get(SETUP)
    assert "Moderators and administrators sign in with a second factor" in setup_page.text
    # A moderator's action by POST is refused the same way, and changes nothing.
    assert client.post(reverse("moderation"))["Location"] == SETUP

    with at(0):
        app = pyotp.TOTP(secret_shown(setup_page))
        client.post(SETUP, {"code": app.now()})
    assert client.get(reverse("admin:index")).status_code == 200


@pytest.mark.usefixtures("required")
def test_a_moderator_signs_in_with_the_code_and_may_not_turn_it_off(client):
    mod = moderator_account("mod")
    client.force_login(mod)
    app, _ = set_up(client)
    client.logout()

    with at(1):
        sign_in(client, "mod")
        assert client.get(reverse("moderation"))["Location"].startswith(VERIFY)
        client.post(VERIFY, {"code": app.now()}, REMOTE_ADDR=IP)
    assert client.get(reverse("moderation")).status_code == 200
    refused = client.post(reverse("accounts:two_factor_off"), {"two_factor-password": PASSWORD})
    assert refused.status_code == 400
    assert "Moderators and administrators must keep two-factor sign-in on." in refused.text
    assert two_factor.enrolled(mod)


@pytest.mark.usefixtures("required")
def test_a_player_made_moderator_is_sent_to_set_it_up_within_minutes(client, player):
    with at(0):
        client.force_login(player)
        assert client.get(SETTINGS).status_code == 200
        player.groups.add(Group.objects.get(name="moderators"))
    with time_machine.travel(START + two_factor.RECHECK_EVERY.total_seconds() + 60, tick=False):
        assert client.get(SETTINGS)["Location"].startswith(SETUP)


# -- Changing it from Settings ---------------------------------------------------------------


def test_new_recovery_codes_need_the_password_and_replace_the_old(client):
    user, _, codes = enrolled_player(client)
    client.force_login(user)
    session = client.session
    session[two_factor.STATE_KEY] = [two_factor.VERIFIED, time.time()]
    session.save()

    wrong = client.post(reverse("accounts:two_factor_codes_new"), {"two_factor-password": "nope"})
    assert wrong.status_code == 400
    assert WRONG_PASSWORD in wrong.text
    assert set(StaticToken.objects.filter(device__user=user).values_list("token", flat=True)) == {
        code.replace("-", "") for code in codes
    }

    made = client.post(reverse("accounts:two_factor_codes_new"), {"two_factor-password": PASSWORD}, follow=True)
    new = re.findall(r"<li><code>([a-z2-7]{4}-[a-z2-7]{4})</code></li>", made.text)
    assert len(new) == 10 and not set(new) & set(codes)
    assert not StaticToken.objects.filter(token__in=[code.replace("-", "") for code in codes]).exists()


def test_turning_it_off_needs_the_password(client):
    user, app, _ = enrolled_player(client)
    with at(1):
        sign_in(client, "alice")
        client.post(VERIFY, {"code": app.now()}, REMOTE_ADDR=IP)

    wrong = client.post(reverse("accounts:two_factor_off"), {"two_factor-password": "nope"})
    assert wrong.status_code == 400
    assert two_factor.enrolled(user)

    off = client.post(reverse("accounts:two_factor_off"), {"two_factor-password": PASSWORD})
    assert off.status_code == 302
    assert not two_factor.enrolled(user)
    assert two_factor.recovery_codes_left(user=user) == 0
    client.logout()
    assert sign_in(client, "alice").status_code == 302
    assert client.get(SETTINGS).status_code == 200


def test_deleting_the_account_asks_for_the_second_factor_too(client):
    user, app, codes = enrolled_player(client)
    with at(1):
        sign_in(client, "alice")
        client.post(VERIFY, {"code": app.now()}, REMOTE_ADDR=IP)
    form = {"password": PASSWORD, "understood": "on"}

    missing = client.post(reverse("accounts:delete"), form)
    assert missing.status_code == 400
    wrong = client.post(reverse("accounts:delete"), {**form, "code": "000000"})
    assert wrong.status_code == 400 and WRONG_CODE in wrong.text
    user.refresh_from_db()
    assert user.username == "alice"

    deleted = client.post(reverse("accounts:delete"), {**form, "code": codes[0]})
    assert deleted.status_code == 302
    user.refresh_from_db()
    assert user.username != "alice"


# -- The admin -------------------------------------------------------------------------------


def test_a_superuser_resets_a_lost_phone_and_the_audit_trail_says_so(root_client, root):
    user, _, _ = enrolled_player(Client())
    page = root_client.get(reverse("admin:accounts_user_change", args=[user.pk]))
    assert "On since" in page.text and "10 recovery codes left" in page.text

    response = root_client.post(
        reverse("admin:accounts_user_changelist"),
        {"action": "reset_two_factor", "_selected_action": [user.pk]},
    )

    assert response.status_code == 302
    assert not two_factor.enrolled(user)
    entry = AuditEntry.objects.get(subject=user)
    assert entry.actor == root and "Two-factor sign-in reset" in entry.reason


def test_a_moderator_may_not_reset_it(moderator_client):
    user, _, _ = enrolled_player(Client())
    moderator_client.post(
        reverse("admin:accounts_user_changelist"),
        {"action": "reset_two_factor", "_selected_action": [user.pk]},
    )
    assert two_factor.enrolled(user)


def test_no_admin_page_shows_a_secret(root_client):
    for model in ("totpdevice", "staticdevice", "statictoken"):
        assert root_client.get(f"/admin/otp_totp/{model}/").status_code == 404
        assert root_client.get(f"/admin/otp_static/{model}/").status_code == 404


def test_the_data_export_says_it_is_on_and_never_holds_the_secret_or_a_code(client):
    user, app, codes = enrolled_player(client)
    with at(1):
        sign_in(client, "alice")
        client.post(VERIFY, {"code": app.now()}, REMOTE_ADDR=IP)

    exported = client.get(reverse("data_export"))

    profile = exported.json()["profile"]
    assert profile["two_factor"]["recovery_codes_left"] == 10
    assert profile["two_factor"]["on_since"] is not None
    device = TOTPDevice.objects.get(user=user)
    for secret in (device.key, app.secret, *(code.replace("-", "") for code in codes), *codes):
        assert secret.lower() not in exported.text.lower()


def test_an_account_without_a_password_changes_it_with_a_code(client):
    """An account that signs in with Discord or Lichess only has no password to type."""
    user, _, codes = enrolled_player(client)
    user.set_unusable_password()
    user.save(update_fields=["password"])
    client.force_login(user)
    session = client.session
    session[two_factor.STATE_KEY] = [two_factor.VERIFIED, time.time()]
    session.save()
    page = client.get(SETTINGS)
    assert "A code from your authenticator app, to change any of this" in page.text
    assert 'name="two_factor-password"' not in page.text

    wrong = client.post(reverse("accounts:two_factor_off"), {"two_factor-code": "000000"})
    assert wrong.status_code == 400 and WRONG_CODE in wrong.text
    assert two_factor.enrolled(user)

    off = client.post(reverse("accounts:two_factor_off"), {"two_factor-code": codes[0]})
    assert off.status_code == 302
    assert not two_factor.enrolled(user)


def test_a_reset_of_many_accounts_costs_what_a_reset_of_one_does(client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from accounts.models import User

    alone, _, _ = enrolled_player(Client(), "solo")
    many = [enrolled_player(Client(), f"many{n}")[0] for n in range(3)]
    bystander = UserFactory(username="nophone")

    with CaptureQueriesContext(connection) as one:
        assert two_factor.two_factor_reset(accounts=User.objects.filter(pk=alone.pk)) == [alone]
    with CaptureQueriesContext(connection) as three:
        chosen = User.objects.filter(pk__in=[*(user.pk for user in many), bystander.pk])
        assert two_factor.two_factor_reset(accounts=chosen) == many  # the one without it is left out

    assert len(three) == len(one)
    assert not any(two_factor.enrolled(user) for user in [alone, *many])
