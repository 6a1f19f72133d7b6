"""The email settings page and the unsubscribe page, on a phone and by keyboard (axe checks each page)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from notifications import preferences
from notifications.mail_views import SAVED
from notifications.models import EmailMode, Kind
from tests.browser.conftest import DESKTOP, PHONE
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name=username, exact=True)).to_be_visible()


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.parametrize("device", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_settings_are_chosen_and_saved_by_keyboard(new_page, screenshot, player, device):
    page = new_page(device)
    log_in(page, "alice")

    page.goto("/notifications/settings/")
    expect(page.get_by_text("is not verified yet, so no notification mail goes out until it is")).to_be_visible()
    assert no_horizontal_scroll(page)
    rated = page.get_by_role("group", name=Kind.RATED.label)
    expect(rated.get_by_role("radio", name="Daily digest")).to_be_checked()
    screenshot(page, f"email-settings-{'phone' if device is PHONE else 'desktop'}")

    rated.get_by_role("radio", name="Daily digest").focus()
    page.keyboard.press("ArrowLeft")  # within a group, the arrows choose
    expect(rated.get_by_role("radio", name="At once")).to_be_checked()
    kinds = preferences.kinds_for(is_staff=False)
    for _ in range(len(kinds) - kinds.index(Kind.RATED)):  # Tab moves group by group: the kinds below, the button
        page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Save email settings")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_text(SAVED)).to_be_visible()
    expect(page.get_by_role("group", name=Kind.RATED.label).get_by_role("radio", name="At once")).to_be_checked()
    assert preferences.modes_for([player.pk])[player.pk][Kind.RATED] == EmailMode.INSTANT


def test_unsubscribe_pages_on_a_phone(new_page, screenshot, player):
    page = new_page(PHONE)
    token = preferences.unsubscribe_token(player.pk, Kind.DISPUTED)

    page.goto(f"/notifications/unsubscribe/{token}/")
    assert no_horizontal_scroll(page)
    page.get_by_role("button", name="Unsubscribe").click()
    expect(page.get_by_role("heading", name="Unsubscribed")).to_be_visible()
    screenshot(page, "unsubscribed-phone")
    assert preferences.modes_for([player.pk])[player.pk][Kind.DISPUTED] == EmailMode.OFF

    assert page.goto(f"/notifications/unsubscribe/{token[:-2]}/").status == 400
    expect(page.get_by_text(preferences.BAD_TOKEN)).to_be_visible()
    screenshot(page, "unsubscribe-bad-link-phone")
