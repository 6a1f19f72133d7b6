"""One verified address, one account: sign-up, settings, links and password resets (through a
real SMTP server), the database's constraint and the migration that made room for it."""

from __future__ import annotations

import importlib
import re
from datetime import timedelta

import pytest
from django.apps import apps
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from accounts.validators import EMAIL_VERIFIED_ELSEWHERE
from accounts.verification import LINK_ADDRESS_TAKEN, verification_path
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
SIGNUP = reverse("accounts:signup")
SETTINGS = reverse("accounts:settings")
RESET = reverse("accounts:password_reset")
NEW_PASSWORD = "a-brand-new-long-password"
MIGRATION = importlib.import_module("accounts.migrations.0006_verified_email_unique")


def verified(user):
    user.email_verified = user.email
    user.save()
    return user


def sign_up(address: str, capture, *, username: str = "newbie", ip: str = "198.51.100.7"):
    data = {"username": username, "email": address, "password1": "a-long-pass-9", "password2": "a-long-pass-9"}
    with capture(execute=True):
        return Client().post(SIGNUP, data, REMOTE_ADDR=ip)


def reset_links(email: str, smtp_server, capture, *, count: int) -> dict[str, str]:
    """Ask for a reset of ``email``; the links mailed, by the username each mail greets."""
    with capture(execute=True):
        Client().post(RESET, {"email": email})
    links = {}
    for mail in smtp_server.wait_for(count):
        text = mail.get_body(preferencelist=("plain",)).get_content()
        name = re.search(r"Hello (\S+),", text).group(1)
        links[name] = re.search(r"https?://\S+", text).group(0).removeprefix(settings.SITE_URL)
    return links


def test_sign_up_refuses_an_address_another_account_verified(outsider, smtp_server, django_capture_on_commit_callbacks):
    verified(outsider)

    refused = sign_up("Mallory@Example.ORG", django_capture_on_commit_callbacks)

    assert refused.status_code == 200
    assert EMAIL_VERIFIED_ELSEWHERE in refused.text
    assert "mallory" not in refused.text.replace("Mallory@Example.ORG", "")  # names no account
    assert not User.objects.filter(username="newbie").exists()
    assert smtp_server.messages == []


def test_an_address_nobody_verified_may_be_on_several_accounts(
    outsider, smtp_server, django_capture_on_commit_callbacks
):
    signed_up = sign_up("mallory@example.org", django_capture_on_commit_callbacks)

    assert signed_up.status_code == 302
    assert User.objects.filter(email__iexact="mallory@example.org").count() == 2


def test_refused_addresses_count_against_the_sign_up_limit(settings, outsider, django_capture_on_commit_callbacks):
    settings.SIGNUP_RATE = "2/hour"
    verified(outsider)
    for _ in (1, 2):
        assert EMAIL_VERIFIED_ELSEWHERE in sign_up("mallory@example.org", django_capture_on_commit_callbacks).text

    third = sign_up("someone@example.org", django_capture_on_commit_callbacks)

    assert third.status_code == 429
    assert not User.objects.filter(username="newbie").exists()


def test_settings_refuse_an_address_another_account_verified(
    outsider, player_client, player, smtp_server, django_capture_on_commit_callbacks
):
    verified(outsider)

    with django_capture_on_commit_callbacks(execute=True):
        refused = player_client.post(SETTINGS, {"email": "MALLORY@example.org", "about": "hi"})

    assert refused.status_code == 200
    assert EMAIL_VERIFIED_ELSEWHERE in refused.text
    player.refresh_from_db()
    assert (player.email, player.about) == ("alice@example.org", "")
    assert smtp_server.messages == []


def test_a_link_for_an_address_another_account_verified_meanwhile_is_refused(outsider):
    taker = UserFactory(username="taker", email="mallory@example.org")
    path = verification_path(user=outsider)
    assert Client().get(verification_path(user=taker)).status_code == 200

    refused = Client().get(path)

    assert refused.status_code == 400
    assert LINK_ADDRESS_TAKEN in refused.text
    outsider.refresh_from_db()
    assert not outsider.has_verified_email


def test_the_database_refuses_a_second_verified_account_for_an_address(outsider):
    verified(outsider)
    other = UserFactory(username="other", email="Mallory@example.org")

    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.filter(pk=other.pk).update(email_verified="MALLORY@EXAMPLE.ORG")
    # A stale verified address (the account moved on to another) holds nothing.
    User.objects.filter(pk=outsider.pk).update(email="new@example.org")
    User.objects.filter(pk=other.pk).update(email_verified="mallory@example.org")


def test_a_reset_mails_only_the_account_that_verified_the_address(
    outsider, smtp_server, django_capture_on_commit_callbacks
):
    UserFactory(username="squatter", email="mallory@example.org")
    verified(outsider)

    links = reset_links("mallory@example.org", smtp_server, django_capture_on_commit_callbacks, count=1)

    assert list(links) == ["mallory"]
    assert smtp_server.recipients == [["mallory@example.org"]]


def test_without_a_verified_holder_each_holder_gets_a_link_and_the_first_used_verifies(
    outsider, smtp_server, django_capture_on_commit_callbacks
):
    UserFactory(username="twin", email="Mallory@example.org")

    links = reset_links("mallory@example.org", smtp_server, django_capture_on_commit_callbacks, count=2)

    assert sorted(links) == ["mallory", "twin"]
    for name in ("twin", "mallory"):  # twin first: its address is then verified, mallory's cannot be
        browser = Client()
        form = browser.get(links[name], follow=True).redirect_chain[-1][0]
        with django_capture_on_commit_callbacks(execute=True):
            done = browser.post(form, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}, follow=True)
        assert "Your new password is set" in done.text
    assert [u.username for u in User.objects.filter(email__iexact="mallory@example.org") if u.has_verified_email] == [
        "twin"
    ]
    assert User.objects.get(username="mallory").check_password(NEW_PASSWORD)


def test_the_migration_unverifies_all_but_the_latest_user_of_a_shared_address():
    constraint = next(c for c in User._meta.constraints if c.name == "accounts_user_verified_email_unique")
    now = timezone.now()
    with connection.schema_editor() as editor:
        editor.remove_constraint(User, constraint)
    old = UserFactory(username="old", email="shared@example.org", email_verified="shared@example.org")
    recent = UserFactory(
        username="recent", email="Shared@example.org", email_verified="shared@EXAMPLE.org", last_login=now
    )
    older_login = UserFactory(
        username="older", email="shared@example.org", email_verified="shared@example.org", last_login=now - timedelta(1)
    )
    moved_on = UserFactory(username="moved", email="mine@example.org", email_verified="shared@example.org")
    alone = UserFactory(username="alone", email="alone@example.org", email_verified="alone@example.org")

    MIGRATION.unverify_duplicates(apps, None)
    with connection.schema_editor() as editor:
        editor.add_constraint(User, constraint)

    def kept(user) -> str:
        user.refresh_from_db()
        return user.email_verified

    assert kept(recent) == "shared@EXAMPLE.org"
    assert kept(old) == kept(older_login) == ""
    assert kept(moved_on) == "shared@example.org"  # not its address any more: not counted
    assert kept(alone) == "alone@example.org"
