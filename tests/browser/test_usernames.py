"""Names in any script in Chromium, on a phone and a desktop: a look-alike and an invisible
character are refused with a message on the field, then "Zoë" signs up and has her page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def sign_up(page, username: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill("a-long-unusual-pass")
    page.get_by_label("Password confirmation").fill("a-long-unusual-pass")
    page.get_by_role("button", name="Sign up").click()


@pytest.mark.parametrize("device", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_look_alikes_and_invisible_characters_are_refused_and_zoe_signs_up(new_page, screenshot, device):
    UserFactory(username="paypal")
    page = new_page(device)
    page.goto("/accounts/signup/")

    sign_up(page, "раураl")  # Cyrillic letters with a Latin l
    field_error = page.locator("#id_username_error")
    expect(field_error).to_contain_text("“раураl” mixes Cyrillic and Latin")
    sign_up(page, "раура1")  # all Cyrillic but the digit: one script, still a look-alike
    expect(field_error).to_contain_text("could be mistaken for the existing username “paypal”")
    expect(page.get_by_label("Username")).to_have_attribute("aria-invalid", "true")
    screenshot(page, f"signup-look-alike-{'phone' if device is PHONE else 'desktop'}")
    sign_up(page, "Zo\u200bë")
    expect(field_error).to_contain_text("the invisible zero width space (U+200B) is not allowed")

    sign_up(page, "Zoë")
    expect(page.get_by_text("Welcome, Zoë!")).to_be_visible()
    page.goto("/players/Zoë/")
    expect(page.get_by_role("heading", name="Zoë")).to_be_visible()
