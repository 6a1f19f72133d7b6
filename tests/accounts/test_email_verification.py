"""Verifying an address with a signed link sent through a real SMTP server."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.core import signing
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from accounts.verification import LINK_EXPIRED, LINK_INVALID, LINK_OLD_ADDRESS, verification_path
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
SETTINGS = reverse("accounts:settings")
RESEND = reverse("accounts:verification_resend")
VERIFIED = "Your address is verified"


def link_in(message) -> str:
    text = message.get_body(preferencelist=("plain",)).get_content()
    url = re.search(r"https?://\S+", text).group(0)
    assert url.startswith(settings.SITE_URL + "/accounts/verify-email/")
    return url.removeprefix(settings.SITE_URL)


def save_settings(client, capture, email: str, about: str = ""):
    with capture(execute=True):
        return client.post(SETTINGS, {"email": email, "about": about})


@pytest.mark.parametrize(
    ("email", "verified", "expected"),
    [
        ("", "", False),
        ("a@example.org", "", False),
        ("a@example.org", "a@example.org", True),
        ("A@Example.org", "a@example.ORG", True),
        ("new@example.org", "a@example.org", False),
    ],
)
def test_an_address_is_verified_while_it_is_the_one_verified(email, verified, expected):
    assert User(email=email, email_verified=verified).has_verified_email is expected


def test_sign_up_with_an_address_sends_a_link_that_verifies_it(smtp_server, django_capture_on_commit_callbacks):
    data = {
        "username": "newbie",
        "email": "newbie@example.org",
        "password1": "a-long-pass-9",
        "password2": "a-long-pass-9",
    }
    client = Client()
    with django_capture_on_commit_callbacks(execute=True):
        signed_up = client.post(reverse("accounts:signup"), data, follow=True)

    assert "We sent a link to newbie@example.org" in signed_up.text
    [mail] = smtp_server.wait_for(1)
    assert smtp_server.recipients == [["newbie@example.org"]]
    assert mail["Subject"] == "Confirm your address for Ladder"
    assert "Confirm my address</a>" in mail.get_body(preferencelist=("html",)).get_content()
    assert "Not verified" in client.get(SETTINGS).text

    page = Client().get(link_in(mail))  # no login needed

    assert page.status_code == 200
    assert VERIFIED in page.text
    assert User.objects.get(username="newbie").has_verified_email
    assert "Verified</span> newbie@example.org" in client.get(SETTINGS).text


def test_sign_up_without_an_address_sends_nothing(smtp_server, django_capture_on_commit_callbacks):
    data = {"username": "newbie", "email": "", "password1": "a-long-pass-9", "password2": "a-long-pass-9"}
    with django_capture_on_commit_callbacks(execute=True):
        Client().post(reverse("accounts:signup"), data)

    assert smtp_server.messages == []


def test_a_new_address_is_unverified_and_an_old_link_is_refused(
    outsider, outsider_client, smtp_server, django_capture_on_commit_callbacks
):
    save_settings(outsider_client, django_capture_on_commit_callbacks, "old@example.org")
    old_link = link_in(smtp_server.wait_for(1)[0])
    assert Client().get(old_link).status_code == 200

    save_settings(outsider_client, django_capture_on_commit_callbacks, "new@example.org")

    outsider.refresh_from_db()
    assert (outsider.email_verified, outsider.has_verified_email) == ("old@example.org", False)
    new_link = link_in(smtp_server.wait_for(2)[1])
    assert smtp_server.recipients[1] == ["new@example.org"]
    refused = Client().get(old_link)
    assert refused.status_code == 400
    assert LINK_OLD_ADDRESS in refused.text
    assert Client().get(new_link).status_code == 200
    outsider.refresh_from_db()
    assert outsider.has_verified_email


def test_saving_without_changing_the_address_sends_nothing(
    outsider, outsider_client, smtp_server, django_capture_on_commit_callbacks
):
    save_settings(outsider_client, django_capture_on_commit_callbacks, "mallory@example.org", about="Hi")
    assert smtp_server.messages == []

    outsider.email_verified = "mallory@example.org"
    outsider.save()
    save_settings(outsider_client, django_capture_on_commit_callbacks, "Mallory@Example.org")  # only the case
    assert smtp_server.messages == []


def test_a_link_expires_after_three_days(outsider):
    sent = timezone.now()
    with time_machine.travel(sent, tick=False):
        path = verification_path(user=outsider)

    with time_machine.travel(sent + timedelta(days=3, minutes=1), tick=False):
        page = Client().get(path)

    assert page.status_code == 400
    assert LINK_EXPIRED in page.text
    outsider.refresh_from_db()
    assert not outsider.has_verified_email


@pytest.mark.parametrize("change", ["cut", "tampered", "other salt", "garbage"])
def test_a_broken_link_is_a_clear_400(outsider, change):
    token = verification_path(user=outsider).split("/")[-2]
    bad = {
        "cut": token[:-3],
        "tampered": token.replace(token[5], "A" if token[5] != "A" else "B", 1),
        "other salt": signing.dumps({"u": outsider.pk, "e": outsider.email}, salt="something-else", compress=True),
        "garbage": "not-a-token",
    }[change]

    page = Client().get(reverse("accounts:verify_email", kwargs={"token": bad}))

    assert page.status_code == 400
    assert LINK_INVALID in page.text
    outsider.refresh_from_db()
    assert not outsider.has_verified_email


def test_following_a_link_twice_is_harmless(outsider):
    path = verification_path(user=outsider)

    assert Client().get(path).status_code == 200
    assert Client().get(path).status_code == 200


def test_a_link_of_an_account_since_banned_is_refused(outsider):
    path = verification_path(user=outsider)
    User.objects.filter(pk=outsider.pk).update(is_active=False)

    assert Client().get(path).status_code == 400


def test_send_the_link_again_is_limited(settings, outsider_client, smtp_server, django_capture_on_commit_callbacks):
    settings.EMAIL_VERIFY_RESEND_RATE = "2/hour"
    page = outsider_client.get(SETTINGS)
    assert "Not verified" in page.text
    assert "Send the link again" in page.text

    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            assert outsider_client.post(RESEND).status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        refused = outsider_client.post(RESEND)

    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert "You asked for several links in a short time. Try again in" in refused.text
    assert smtp_server.recipients == [["mallory@example.org"]] * 2


def test_changing_the_address_is_limited_with_send_the_link_again(
    settings, outsider, outsider_client, smtp_server, django_capture_on_commit_callbacks
):
    settings.EMAIL_VERIFY_RESEND_RATE = "3/hour"
    for n in (1, 2):
        assert (
            save_settings(outsider_client, django_capture_on_commit_callbacks, f"new{n}@example.org").status_code == 302
        )
    with django_capture_on_commit_callbacks(execute=True):
        assert outsider_client.post(RESEND).status_code == 302  # the third link of the hour

    refused = save_settings(outsider_client, django_capture_on_commit_callbacks, "new3@example.org", about="Hi")

    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert "You changed your address several times in a short time" in refused.text
    assert "Nothing was saved: try again in" in refused.text
    assert 'aria-invalid="true"' in refused.text  # on the address field
    outsider.refresh_from_db()
    assert (outsider.email, outsider.about) == ("new2@example.org", "")
    with django_capture_on_commit_callbacks(execute=True):
        assert outsider_client.post(RESEND).status_code == 429
    assert smtp_server.recipients == [["new1@example.org"], ["new2@example.org"], ["new2@example.org"]]


def test_a_change_that_mails_nothing_is_not_limited(
    settings, outsider, outsider_client, smtp_server, django_capture_on_commit_callbacks
):
    settings.EMAIL_VERIFY_RESEND_RATE = "1/hour"
    assert save_settings(outsider_client, django_capture_on_commit_callbacks, "new@example.org").status_code == 302

    for about in ("one", "two"):  # the address unchanged
        assert (
            save_settings(outsider_client, django_capture_on_commit_callbacks, "new@example.org", about).status_code
            == 302
        )
    assert save_settings(outsider_client, django_capture_on_commit_callbacks, "").status_code == 302  # no address

    outsider.refresh_from_db()
    assert (outsider.email, outsider.about) == ("", "")
    assert smtp_server.recipients == [["new@example.org"]]


def test_send_the_link_again_needs_an_unverified_address(
    outsider, outsider_client, smtp_server, django_capture_on_commit_callbacks
):
    outsider.email_verified = outsider.email
    outsider.save()
    assert "Send the link again" not in outsider_client.get(SETTINGS).text

    with django_capture_on_commit_callbacks(execute=True):
        response = outsider_client.post(RESEND, follow=True)

    assert "Your address is verified already." in response.text
    assert smtp_server.messages == []


def test_send_the_link_again_is_a_post_for_someone_logged_in(client, outsider_client):
    assert outsider_client.get(RESEND).status_code == 405
    assert Client().post(RESEND).status_code == 302  # to the login page


def test_an_account_without_an_address_is_told_what_it_misses(client):
    client.force_login(UserFactory(username="noaddress", email=""))

    assert "No address yet." in client.get(SETTINGS).text
