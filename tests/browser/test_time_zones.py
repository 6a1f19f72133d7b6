"""Each account's time zone in Chromium: one match at each player's own labelled time, Settings'
select used with the keyboard, and sign-up's guess from the browser's zone (Playwright's ``timezone_id``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from accounts.models import User
from ladder.matches import reporting
from ladder.matches.checks import SideInput
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_matches import log_in

pytestmark = pytest.mark.django_db(transaction=True)
DEVICES = pytest.mark.parametrize("device", [PHONE, DESKTOP], ids=["phone", "desktop"])
# 03:30 UTC on 30 Nov: still the 29th in New York, already 04:30 in Berlin.
PLAYED = datetime(2026, 11, 30, 3, 30, tzinfo=UTC)


def in_zone(user: User, zone: str) -> None:
    user.time_zone = zone
    user.save(update_fields=["time_zone"])


@pytest.fixture
def match(ladder, player, opponent):
    return reporting.match_report(
        ladder=ladder,
        reporter=player,
        sides=[SideInput([player], 1), SideInput([opponent], 2)],
        played_at=PLAYED,
        now=PLAYED + timedelta(hours=1),
    )


@DEVICES
def test_new_york_and_berlin_see_one_match_at_their_own_labelled_times(
    new_page, screenshot, device, match, player, opponent
):
    name = "phone" if device is PHONE else "desktop"
    in_zone(player, "America/New_York")
    in_zone(opponent, "Europe/Berlin")
    # Each browser set to a third zone: the account decides, not the machine.
    new_york = new_page({**device, "timezone_id": "Asia/Tokyo"})
    berlin = new_page({**device, "timezone_id": "Asia/Tokyo"})
    log_in(new_york, "alice")
    log_in(berlin, "bob")

    for page, shown in ((new_york, "29 Nov 2026, 22:30 EST"), (berlin, "30 Nov 2026, 04:30 CET")):
        page.goto(match.get_absolute_url())
        played = page.locator('time[datetime="2026-11-30T03:30:00Z"]')
        expect(played.first).to_have_text(shown)
        expect(page.get_by_text(shown).first).to_be_visible()
    screenshot(new_york, f"time-zone-match-new-york-{name}")
    berlin.emulate_media(color_scheme="dark")
    screenshot(berlin, f"time-zone-match-berlin-{name}-dark")


@DEVICES
def test_settings_changes_the_zone_with_the_keyboard(new_page, screenshot, device, match, player):
    name = "phone" if device is PHONE else "desktop"
    page = new_page(device)
    log_in(page, "alice")
    page.goto("/accounts/settings/")
    select = page.get_by_role("combobox", name="Time zone")
    expect(select).to_have_value("")  # the site's zone, UTC
    screenshot(page, f"time-zone-settings-{name}")

    select.focus()
    page.keyboard.type("Berlin")  # a closed select picks the option its typed letters begin
    expect(select).to_have_value("Europe/Berlin")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Save time zone")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_text("Times are now shown in Europe/Berlin.")).to_be_visible()
    expect(page.get_by_role("combobox", name="Time zone")).to_have_value("Europe/Berlin")
    assert User.objects.get(pk=player.pk).time_zone == "Europe/Berlin"
    page.emulate_media(color_scheme="dark")
    screenshot(page, f"time-zone-settings-saved-{name}-dark")
    page.goto(match.get_absolute_url())
    expect(page.locator('time[datetime="2026-11-30T03:30:00Z"]').first).to_have_text("30 Nov 2026, 04:30 CET")


def test_settings_shows_the_error_of_an_unknown_zone_and_keeps_the_old(new_page, player):
    in_zone(player, "Europe/Berlin")
    page = new_page(PHONE)
    log_in(page, "alice")
    page.goto("/accounts/settings/")
    # A select offers only known zones: a stale or forged form is what sends another.
    page.get_by_role("combobox", name="Time zone").evaluate(
        "s => { s.options[s.selectedIndex].value = 'Mars/Olympus'; }"
    )
    page.get_by_role("button", name="Save time zone").click()

    expect(page.locator("#zone_time_zone_error")).to_contain_text("“Mars/Olympus” is not a time zone we know")
    assert User.objects.get(pk=player.pk).time_zone == "Europe/Berlin"


@pytest.mark.parametrize("browser_zone", ["America/New_York", "Europe/Berlin"])
def test_signup_takes_the_browsers_zone(new_page, db, browser_zone):
    page = new_page({**DESKTOP, "timezone_id": browser_zone})
    page.goto("/accounts/signup/")
    page.get_by_label("Username").fill("newcomer")
    page.get_by_label("Password", exact=True).fill("a-long-unusual-pass")
    page.get_by_label("Password confirmation").fill("a-long-unusual-pass")
    page.get_by_role("button", name="Sign up").click()

    expect(page.get_by_role("link", name="newcomer", exact=True)).to_be_visible()
    assert User.objects.get(username="newcomer").time_zone == browser_zone
    page.goto("/accounts/settings/")
    expect(page.get_by_role("combobox", name="Time zone")).to_have_value(browser_zone)
