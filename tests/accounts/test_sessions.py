"""The sessions an account is signed in with (docs/security.md, "Sessions"): listed in Settings
with their device and last use, signed out from there, and ended by a new password."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.models import AccountSession
from accounts.sessions import SEEN_EVERY, SEEN_KEY, device_name, sessions_sweep
from accounts.tasks import sweep_sessions_task
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db
SETTINGS = reverse("accounts:settings")
SIGN_OUT = reverse("accounts:sessions_sign_out")
FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.0 Mobile/15E148 Safari/604.1"
)


def signed_in(user, agent: str) -> Client:
    client = Client(HTTP_USER_AGENT=agent)
    response = client.post(reverse("accounts:login"), {"username": user.username, "password": PASSWORD})
    assert response.status_code == 302, response.text
    return client


def is_signed_in(client: Client) -> bool:
    return client.get(SETTINGS).status_code == 200


@pytest.mark.parametrize(
    ("agent", "name"),
    [
        (FIREFOX, "Firefox on Windows"),
        (IPHONE, "Mobile Safari on iPhone"),
        ("python-requests/2.32.3", "Python Requests"),
        ("", "Unknown device"),
        ("x" * 5000, "Unknown device"),
    ],
)
def test_a_device_is_named_as_a_person_would(agent, name):
    assert device_name(agent) == name


def test_settings_lists_each_signed_in_browser_and_marks_this_one(player):
    laptop = signed_in(player, FIREFOX)
    signed_in(player, IPHONE)

    page = laptop.get(SETTINGS).text

    assert (
        page.count("<li>") >= 2 and 'Firefox on Windows</strong> <span class="badge good">This browser</span>' in page
    )
    assert "Mobile Safari on iPhone</strong>" in page and "Sign out everywhere else" in page
    assert AccountSession.objects.filter(user=player).count() == 2


def test_sign_out_everywhere_else_ends_the_other_sessions_only(player, opponent):
    laptop, phone = signed_in(player, FIREFOX), signed_in(player, IPHONE)
    other_player = signed_in(opponent, FIREFOX)

    response = laptop.post(SIGN_OUT, follow=True)

    assert "Signed out of 1 other session." in response.text
    assert is_signed_in(laptop) and not is_signed_in(phone) and is_signed_in(other_player)
    assert list(AccountSession.objects.filter(user=player).values_list("device", flat=True)) == ["Firefox on Windows"]
    again = laptop.post(SIGN_OUT, follow=True)
    assert "No other session was signed in." in again.text


def test_signing_out_forgets_the_session(player):
    laptop = signed_in(player, FIREFOX)

    laptop.post(reverse("accounts:logout"))

    assert not AccountSession.objects.exists()


def test_a_password_change_signs_out_every_other_session_and_keeps_this_one(player):
    laptop, phone = signed_in(player, FIREFOX), signed_in(player, IPHONE)
    form = {"old_password": PASSWORD, "new_password1": "a-new-long-secret-1", "new_password2": "a-new-long-secret-1"}

    response = laptop.post(reverse("accounts:password_change"), form, follow=True)

    assert response.status_code == 200 and "Signed out of 1 other session." in response.text
    assert is_signed_in(laptop) and not is_signed_in(phone)
    [row] = AccountSession.objects.filter(user=player)
    assert row.session_key == laptop.session.session_key  # the cycled key, with its row
    assert "This browser" in laptop.get(SETTINGS).text


def test_a_wrong_old_password_changes_nothing(player):
    laptop, phone = signed_in(player, FIREFOX), signed_in(player, IPHONE)
    form = {"old_password": "wrong", "new_password1": "a-new-long-secret-1", "new_password2": "a-new-long-secret-1"}

    response = laptop.post(reverse("accounts:password_change"), form)

    assert response.status_code == 200 and "Your old password was entered incorrectly" in response.text
    assert is_signed_in(laptop) and is_signed_in(phone)
    assert AccountSession.objects.filter(user=player).count() == 2


def test_a_password_reset_signs_out_every_session(player):
    laptop, phone = signed_in(player, FIREFOX), signed_in(player, IPHONE)
    player.refresh_from_db()  # the token is bound to the last sign-in
    uid = urlsafe_base64_encode(force_bytes(player.pk))
    link = reverse("accounts:password_reset_confirm", args=[uid, default_token_generator.make_token(player)])
    stranger = Client()
    form_page = stranger.get(link, follow=True).redirect_chain[-1][0]

    stranger.post(form_page, {"new_password1": "a-new-long-secret-1", "new_password2": "a-new-long-secret-1"})

    assert not is_signed_in(laptop) and not is_signed_in(phone)
    assert not AccountSession.objects.filter(user=player).exists()


def test_last_use_moves_forward_at_most_every_five_minutes(player):
    laptop = signed_in(player, FIREFOX)
    row = AccountSession.objects.get()
    first = row.last_seen_at

    with time_machine.travel(timezone.now() + SEEN_EVERY - timedelta(seconds=5), tick=False):
        laptop.get(SETTINGS)
    row.refresh_from_db()
    assert row.last_seen_at == first
    with time_machine.travel(timezone.now() + SEEN_EVERY + timedelta(seconds=5), tick=False):
        laptop.get(SETTINGS)
    row.refresh_from_db()
    assert row.last_seen_at > first and row.signed_in_at == first


def test_a_session_from_before_the_list_gets_its_row_on_its_next_request(player, client):
    client.force_login(player)
    AccountSession.objects.all().delete()  # as a session signed in before the list was kept
    session = client.session
    del session[SEEN_KEY]
    session.save()

    client.get(SETTINGS, HTTP_USER_AGENT=FIREFOX)

    assert AccountSession.objects.get().device == "Firefox on Windows"


def test_the_sweep_forgets_sessions_past_their_lifetime(settings, player, opponent):
    signed_in(player, FIREFOX)
    signed_in(opponent, IPHONE)
    AccountSession.objects.filter(user=player).update(
        last_seen_at=timezone.now() - timedelta(seconds=settings.SESSION_COOKIE_AGE + 60)
    )

    assert "Firefox" not in signed_in(player, IPHONE).get(SETTINGS).text.split("Where you are signed in")[1]
    sweep_sessions_task()

    assert sessions_sweep(now=timezone.now()) == 0
    assert sorted(AccountSession.objects.values_list("user__username", "device")) == [
        ("alice", "Mobile Safari on iPhone"),
        ("bob", "Mobile Safari on iPhone"),
    ]


def test_the_sign_out_is_a_post_for_the_signed_in(client, player):
    assert client.post(SIGN_OUT).status_code == 302  # to the login page
    assert AccountSession.objects.count() == 0
    laptop = signed_in(player, FIREFOX)
    assert laptop.get(SIGN_OUT).status_code == 405
    assert is_signed_in(laptop)
