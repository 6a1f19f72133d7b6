"""Password reset by mail: through a real SMTP server, the same answer for every address, limited."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
URL = reverse("accounts:password_reset")
DONE = reverse("accounts:password_reset_done")
NEW_PASSWORD = "a-brand-new-long-password"
SENT = "If an account has that address, we sent it a link to choose a new password."


def ask(email: str, capture, *, ip: str = "198.51.100.7", client: Client | None = None):
    """Ask for a reset as a new browser would, running what the request queued on commit."""
    with capture(execute=True):
        return (client or Client()).post(URL, {"email": email}, REMOTE_ADDR=ip)


def link_in(message) -> str:
    """The reset link's path, from the plain-text part of the mail."""
    text = message.get_body(preferencelist=("plain",)).get_content()
    url = re.search(r"https?://\S+", text).group(0)
    assert url.startswith(settings.SITE_URL + "/accounts/password-reset/")
    return url.removeprefix(settings.SITE_URL)


def test_the_login_page_offers_a_reset(client):
    page = client.get(reverse("accounts:login"))

    assert f'<a href="{URL}">Forgot your password?</a>' in page.text


def test_reset_by_mail_then_log_in_with_the_new_password(
    client, outsider, smtp_server, django_capture_on_commit_callbacks
):
    assert not outsider.has_verified_email  # a reset is the one mail an unverified address gets

    response = ask("MALLORY@Example.ORG", django_capture_on_commit_callbacks)

    assert (response.status_code, response["Location"]) == (302, DONE)
    [mail] = smtp_server.wait_for(1)
    assert smtp_server.recipients == [["mallory@example.org"]]
    assert mail["Subject"] == "Choose a new password for Ladder"
    assert mail["From"] == settings.DEFAULT_FROM_EMAIL
    assert mail["Auto-Submitted"] == "auto-generated"
    text = mail.get_body(preferencelist=("plain",)).get_content()
    assert "Hello mallory," in text
    assert "The link works once, for 3\xa0days." in text
    html = mail.get_body(preferencelist=("html",)).get_content()
    assert "Choose a new password</a>" in html

    form_page = client.get(link_in(mail), follow=True)
    assert "Choose a new password" in form_page.text
    done = client.post(
        form_page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}, follow=True
    )
    assert "Your new password is set" in done.text

    login = reverse("accounts:login")
    assert Client().post(login, {"username": "mallory", "password": PASSWORD}).status_code == 200  # refused
    assert Client().post(login, {"username": "mallory", "password": NEW_PASSWORD}).status_code == 302


def test_a_reset_link_works_once(client, outsider, smtp_server, django_capture_on_commit_callbacks):
    ask("mallory@example.org", django_capture_on_commit_callbacks)
    link = link_in(smtp_server.wait_for(1)[0])
    form = client.get(link, follow=True).redirect_chain[-1][0]
    client.post(form, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})

    again = Client().get(link, follow=True)

    assert "<h1>This link does not work</h1>" in again.text
    assert 'name="new_password1"' not in again.text


def test_an_unknown_address_gets_the_same_answer_and_no_mail(outsider, smtp_server, django_capture_on_commit_callbacks):
    known = ask("mallory@example.org", django_capture_on_commit_callbacks)
    unknown = ask("nobody@example.org", django_capture_on_commit_callbacks, ip="198.51.100.8")

    assert (unknown.status_code, unknown["Location"]) == (known.status_code, known["Location"])
    assert len(smtp_server.wait_for(1)) == 1
    assert smtp_server.recipients == [["mallory@example.org"]]
    page = Client().get(DONE)
    assert SENT in page.text


def test_the_request_looks_up_no_account(outsider, django_capture_on_commit_callbacks):
    """Known or not, a request runs the same statements and queues one task: the look-up is the task's."""
    counts = []
    for email, ip in (("mallory@example.org", "198.51.100.7"), ("nobody@example.org", "198.51.100.8")):
        with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks() as queued:
            Client().post(URL, {"email": email}, REMOTE_ADDR=ip)
        counts.append((len(queries), len(queued)))

    assert counts[0] == counts[1]
    assert counts[0][1] == 1


def test_inactive_accounts_get_nothing(smtp_server, django_capture_on_commit_callbacks):
    UserFactory(username="banned", is_active=False)

    response = ask("banned@example.org", django_capture_on_commit_callbacks)

    assert response["Location"] == DONE
    assert smtp_server.messages == []


def test_an_account_without_a_password_sets_its_first_one_from_the_link(
    client, smtp_server, django_capture_on_commit_callbacks
):
    """One made by signing in with Discord or Lichess: the link is how it gets a password at all."""
    UserFactory(username="magnus", password="!")

    ask("magnus@example.org", django_capture_on_commit_callbacks)
    form = client.get(link_in(smtp_server.wait_for(1)[0]), follow=True).redirect_chain[-1][0]
    client.post(form, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})

    login = reverse("accounts:login")
    assert Client().post(login, {"username": "magnus", "password": NEW_PASSWORD}).status_code == 302


def test_a_malformed_address_is_a_form_error(smtp_server, django_capture_on_commit_callbacks):
    response = ask("not-an-address", django_capture_on_commit_callbacks)

    assert response.status_code == 200
    assert "Enter a valid email address." in response.text
    assert smtp_server.messages == []


def test_the_limit_per_address_sends_nothing_more_but_answers_the_same(
    settings, outsider, smtp_server, django_capture_on_commit_callbacks
):
    settings.PASSWORD_RESET_RATE = "2/hour"
    answers = [
        ask("mallory@example.org", django_capture_on_commit_callbacks, ip=f"203.0.113.{n}")["Location"]
        for n in range(1, 5)
    ]

    assert answers == [DONE] * 4
    assert len(smtp_server.messages) == 2


def test_the_limit_per_client_counts_every_address(settings, smtp_server, django_capture_on_commit_callbacks):
    settings.PASSWORD_RESET_CLIENT_RATE = "2/hour"
    for name in ("carol", "dave", "erin"):
        UserFactory(username=name)

    for name in ("carol", "dave", "erin"):
        assert ask(f"{name}@example.org", django_capture_on_commit_callbacks)["Location"] == DONE
    assert [r for [r] in smtp_server.recipients] == ["carol@example.org", "dave@example.org"]

    ask("erin@example.org", django_capture_on_commit_callbacks, ip="192.0.2.44")
    assert smtp_server.recipients[-1] == ["erin@example.org"]


def test_a_flooding_client_does_not_use_up_the_address_limit(
    settings, outsider, smtp_server, django_capture_on_commit_callbacks
):
    settings.PASSWORD_RESET_CLIENT_RATE = "1/hour"
    settings.PASSWORD_RESET_RATE = "2/hour"
    for _ in range(5):
        ask("mallory@example.org", django_capture_on_commit_callbacks, ip="203.0.113.66")

    ask("mallory@example.org", django_capture_on_commit_callbacks, ip="192.0.2.1")

    assert len(smtp_server.messages) == 2  # the flooder's one, and the owner's from elsewhere


def test_setting_a_password_from_the_link_verifies_the_address(
    client, outsider, smtp_server, django_capture_on_commit_callbacks
):
    ask("mallory@example.org", django_capture_on_commit_callbacks)
    form = client.get(link_in(smtp_server.wait_for(1)[0]), follow=True).redirect_chain[-1][0]
    client.post(form, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})

    outsider.refresh_from_db()
    assert outsider.has_verified_email
