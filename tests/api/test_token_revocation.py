"""A new password revokes the account's API tokens: after a reset from the mailed link, and
after a change on the password form. The owner is mailed the list (through a real SMTP server)."""

from __future__ import annotations

import re
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from api.models import ApiToken, RevokedBy
from api.services import token_create, token_revoke
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
ME = "/api/v1/me/"
NEW_PASSWORD = "a-brand-new-long-password"


def api(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def verified(user):
    user.email_verified = user.email
    user.save()
    return user


def tokens_of(user, *names: str) -> list[str]:
    """Secrets of new tokens named ``names``, made a day apart, oldest first."""
    secrets = []
    for days, name in zip(range(len(names), 0, -1), names, strict=True):
        with time_machine.travel(timezone.now() - timedelta(days=days), tick=False):
            secrets.append(token_create(user=user, name=name)[1])
    return secrets


def reset_password(email: str, smtp_server, capture) -> None:
    """Ask for a reset and set a new password from the mailed link, as the owner would."""
    with capture(execute=True):
        Client().post(reverse("accounts:password_reset"), {"email": email})
    text = smtp_server.wait_for(1)[-1].get_body(preferencelist=("plain",)).get_content()
    link = re.search(r"https?://\S+", text).group(0).removeprefix(settings.SITE_URL)
    browser = Client()
    form = browser.get(link, follow=True).redirect_chain[-1][0]
    with capture(execute=True):
        done = browser.post(form, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}, follow=True)
    assert "every API token of the account is revoked" in done.text


def change_password(client, capture):
    with capture(execute=True):
        return client.post(
            reverse("accounts:password_change"),
            {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
            follow=True,
        )


def test_a_password_reset_revokes_every_token_and_mails_the_list(
    outsider, player, smtp_server, django_capture_on_commit_callbacks
):
    outsider.time_zone = "America/New_York"  # the mail writes the tokens' dates in the owner's zone
    outsider.save(update_fields=["time_zone"])
    bot, server = tokens_of(outsider, "my bot", "game server")
    others = token_create(user=player, name="alice's bot")[1]
    assert api(bot).get(ME).status_code == 200

    reset_password("mallory@example.org", smtp_server, django_capture_on_commit_callbacks)

    for secret in (bot, server):
        refused = api(secret).get(ME)
        assert refused.status_code == 401
        assert refused.json()["error"]["message"] == "Invalid or revoked token."
    assert api(others).get(ME).status_code == 200
    assert set(ApiToken.objects.filter(user=outsider).values_list("revoked_by", flat=True)) == {
        RevokedBy.PASSWORD_RESET
    }
    _, revoked_mail = smtp_server.wait_for(2)
    assert smtp_server.recipients == [["mallory@example.org"]] * 2
    assert revoked_mail["Subject"] == "Your API tokens on Ladder were revoked"
    text = revoked_mail.get_body(preferencelist=("plain",)).get_content()
    assert "the password of your account on Ladder was reset" in text
    new_york = ZoneInfo("America/New_York")
    created = [
        f"{t.created_at.astimezone(new_york):%-d %b %Y, %H:%M %Z}" for t in ApiToken.objects.filter(user=outsider)
    ]
    assert re.findall(r"- “(.+?)” \(lad_\S+…\), created (\d+ \w+ \d+, \d\d:\d\d E[SD]T)\r?$", text, re.M) == [
        ("my bot", created[1]),
        ("game server", created[0]),
    ]
    assert "alice's bot" not in text
    assert f"{settings.SITE_URL}/accounts/tokens/" in text


def test_a_password_change_revokes_every_token_and_the_token_page_says_why(
    outsider, outsider_client, smtp_server, django_capture_on_commit_callbacks
):
    verified(outsider)
    [bot] = tokens_of(outsider, "my bot")
    gone = ApiToken.objects.create(user=outsider, name="old one", prefix="lad_x", key_hash="0" * 64)
    token_revoke(user=outsider, token_id=gone.pk)
    elsewhere = Client()
    elsewhere.force_login(outsider)

    done = change_password(outsider_client, django_capture_on_commit_callbacks)

    assert "every API token of\n    your account is revoked" in done.text
    assert api(bot).get(ME).status_code == 401
    [mail] = smtp_server.wait_for(1)
    text = mail.get_body(preferencelist=("plain",)).get_content()
    assert "the password of your account on Ladder was changed" in text
    assert "“my bot”" in text
    assert "old one" not in text  # revoked before, by its owner
    page = outsider_client.get("/accounts/tokens/").text  # this browser stays logged in
    assert "when your password was changed" in page
    assert "by you" in page
    assert elsewhere.get("/accounts/tokens/").status_code == 302  # to the login page


def test_a_password_a_superuser_sets_in_the_admin_revokes_the_tokens(
    outsider, root_client, smtp_server, django_capture_on_commit_callbacks
):
    verified(outsider)
    [bot] = tokens_of(outsider, "my bot")

    with django_capture_on_commit_callbacks(execute=True):
        done = root_client.post(
            reverse("admin:auth_user_password_change", args=[outsider.pk]),
            {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
        )

    assert done.status_code == 302
    assert api(bot).get(ME).status_code == 401
    [mail] = smtp_server.wait_for(1)
    assert "was reset" in mail.get_body(preferencelist=("plain",)).get_content()


def test_tokens_are_revoked_without_a_mail_to_an_unverified_address(
    outsider, outsider_client, smtp_server, django_capture_on_commit_callbacks
):
    [bot] = tokens_of(outsider, "my bot")

    change_password(outsider_client, django_capture_on_commit_callbacks)

    assert api(bot).get(ME).status_code == 401
    assert smtp_server.messages == []


def test_a_new_password_without_tokens_mails_nothing(
    outsider, outsider_client, smtp_server, django_capture_on_commit_callbacks
):
    verified(outsider)

    change_password(outsider_client, django_capture_on_commit_callbacks)

    assert smtp_server.messages == []


def test_a_refused_password_change_revokes_nothing(outsider, outsider_client, django_capture_on_commit_callbacks):
    [bot] = tokens_of(outsider, "my bot")

    with django_capture_on_commit_callbacks(execute=True):
        refused = outsider_client.post(
            reverse("accounts:password_change"),
            {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        )

    assert refused.status_code == 200
    assert api(bot).get(ME).status_code == 200


def test_a_new_token_after_the_reset_works(outsider, smtp_server, django_capture_on_commit_callbacks):
    tokens_of(outsider, "my bot")
    reset_password("mallory@example.org", smtp_server, django_capture_on_commit_callbacks)

    _, fresh = token_create(user=UserFactory(username="mallory"), name="my bot again")

    assert api(fresh).get(ME).status_code == 200
