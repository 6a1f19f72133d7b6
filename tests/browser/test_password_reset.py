"""A forgotten password, on a phone: from the login page to the mail and back in."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from playwright.sync_api import expect

from tests.browser.conftest import PHONE
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)
NEW_PASSWORD = "a-brand-new-long-password"


def test_forgot_password_on_a_phone(new_page, screenshot, outsider, smtp_server):
    page = new_page(PHONE)
    page.goto("/accounts/login/")

    page.get_by_role("link", name="Forgot your password?").click()
    expect(page.get_by_role("heading", name="Forgot your password?")).to_be_visible()
    screenshot(page, "password-reset-phone")
    page.get_by_label("Email").fill("Mallory@example.org")
    page.get_by_label("Email").press("Enter")  # by keyboard

    expect(page.get_by_role("heading", name="Check your mail")).to_be_visible()
    screenshot(page, "password-reset-sent-phone")
    [mail] = smtp_server.wait_for(1)
    text = mail.get_body(preferencelist=("plain",)).get_content()
    link = re.search(r"https?://\S+", text).group(0).removeprefix(settings.SITE_URL)
    inbox = new_page(PHONE)  # the HTML part, as a mail program on a phone shows it
    inbox.set_content(mail.get_body(preferencelist=("html",)).get_content())
    expect(inbox.get_by_role("link", name="Choose a new password")).to_be_visible()
    screenshot(inbox, "password-reset-mail-phone")

    page.goto(link)
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    screenshot(page, "password-reset-choose-phone")
    page.get_by_role("button", name="Set my password").click()

    expect(page.get_by_role("heading", name="Your new password is set")).to_be_visible()
    screenshot(page, "password-reset-done-phone")
    page.get_by_role("link", name="Log in").last.click()
    page.get_by_label("Username").fill("mallory")
    page.get_by_label("Password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name="mallory")).to_be_visible()


def test_address_check_on_the_settings_page(new_page, screenshot, outsider, smtp_server):
    page = new_page(PHONE)
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("mallory")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto("/accounts/settings/")

    expect(page.get_by_text("Not verified")).to_be_visible()
    page.get_by_role("button", name="Send the link again").click()
    expect(page.get_by_text("We sent a link to mallory@example.org.")).to_be_visible()
    screenshot(page, "settings-address-unverified-phone")
    [mail] = smtp_server.wait_for(1)
    text = mail.get_body(preferencelist=("plain",)).get_content()

    page.goto(re.search(r"https?://\S+", text).group(0).removeprefix(settings.SITE_URL))
    expect(page.get_by_role("heading", name="Your address is verified")).to_be_visible()
    screenshot(page, "email-verified-phone")
    page.get_by_role("link", name="Back to settings").click()
    expect(page.get_by_text("Verified", exact=True)).to_be_visible()
