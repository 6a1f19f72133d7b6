"""Two-factor sign-in in Chromium on a phone and a desktop: the QR code the site serves is read
back from a screenshot as a phone's camera reads it, pyotp (not the site's library) makes the
codes from what it holds, and a moderator without an app is kept from the desk."""

from __future__ import annotations

import time
from io import BytesIO

import pyotp
import pytest
import zxingcpp
from PIL import Image
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.factories import PASSWORD, moderator_account

pytestmark = pytest.mark.django_db(transaction=True)


def password_step(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def scan(page) -> pyotp.TOTP:
    """Read the page's QR code from pixels, as an authenticator app does."""
    image = Image.open(BytesIO(page.locator(".qr svg").screenshot()))
    [barcode] = zxingcpp.read_barcodes(image)
    uri = barcode.text
    assert uri.startswith("otpauth://totp/")
    app = pyotp.parse_uri(uri)
    assert isinstance(app, pyotp.TOTP)
    return app


def current_code(app: pyotp.TOTP) -> str:
    """The app's code, typed early enough in its 30-second step for the site to check it in the
    same step. A code the site finds one step back tells it the phone's clock is behind, and it
    then expects later codes a step back too (django-otp's drift), which the test's "next code"
    at sign-in would not be."""
    while time.time() % app.interval > app.interval - 5:
        time.sleep(0.5)
    return app.now()


def log_out(page) -> None:
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Log in")).to_be_visible()


@pytest.mark.parametrize("device", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_set_up_by_scanning_then_sign_in_with_a_code_and_with_a_recovery_code(new_page, screenshot, device, player):
    name = "phone" if device is PHONE else "desktop"
    page = new_page(device)
    password_step(page, "alice")
    page.goto("/accounts/settings/")
    page.get_by_role("link", name="Set up two-factor sign-in").click()
    expect(page.get_by_role("heading", name="Set up two-factor sign-in")).to_be_visible()
    app = scan(page)
    assert app.name.rsplit(":", 1)[-1] == "alice" and app.issuer == "Ladder"
    assert app.secret == page.locator("#secret").inner_text().replace(" ", "")
    screenshot(page, f"two-factor-setup-{name}")

    page.get_by_label("Code from the app").fill("12345")
    page.get_by_role("button", name="Turn on two-factor sign-in").click()
    expect(page.locator("#id_code_error")).to_contain_text("Type the 6 digits")
    page.get_by_label("Code from the app").fill(current_code(app))
    page.get_by_role("button", name="Turn on two-factor sign-in").click()
    codes = page.locator(".recovery-codes code").all_inner_texts()
    assert len(codes) == 10
    screenshot(page, f"two-factor-codes-{name}")
    page.get_by_role("link", name="I have saved them").click()

    log_out(page)
    password_step(page, "alice")
    expect(page.get_by_role("heading", name="One more step")).to_be_visible()
    page.get_by_label("Code", exact=True).fill("000000")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#id_code_error")).to_contain_text("That code is not right")
    screenshot(page, f"two-factor-verify-{name}")
    # The set-up used this step's code, and a code works once: the app's next one.
    page.get_by_label("Code", exact=True).fill(app.at(time.time() + 30))
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name="alice", exact=True)).to_be_visible()
    page.goto("/accounts/settings/")
    expect(page.get_by_text("10 recovery codes left", exact=False)).to_be_visible()
    page.locator("#two-factor-heading").scroll_into_view_if_needed()
    screenshot(page, f"two-factor-settings-{name}")

    log_out(page)
    password_step(page, "alice")
    page.get_by_label("Code", exact=True).fill(codes[0])
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("You signed in with a recovery code: 9 left.", exact=False)).to_be_visible()
    expect(page.get_by_role("link", name="alice", exact=True)).to_be_visible()


@pytest.mark.parametrize("device", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_moderator_without_it_is_refused_the_desk_and_sent_to_set_it_up(new_page, screenshot, device, settings, db):
    settings.TWO_FACTOR_FOR_STAFF = True
    name = "phone" if device is PHONE else "desktop"
    moderator_account("mod")
    page = new_page(device)
    password_step(page, "mod")
    expect(page.get_by_role("heading", name="Set up two-factor sign-in")).to_be_visible()

    page.goto("/moderation/")
    expect(page.get_by_role("heading", name="Set up two-factor sign-in")).to_be_visible()
    expect(page.get_by_text("Moderators and administrators sign in with a second factor")).to_be_visible()
    assert "/accounts/two-factor/setup/" in page.url
    screenshot(page, f"two-factor-required-{name}")

    app = scan(page)
    page.get_by_label("Code from the app").fill(current_code(app))
    page.get_by_role("button", name="Turn on two-factor sign-in").click()
    page.get_by_role("link", name="I have saved them").click()
    expect(page.get_by_role("heading", name="Moderation desk")).to_be_visible()
