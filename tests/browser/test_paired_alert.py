"""A player searching with the tab in the background learns of the pairing: the title and a browser alert."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP
from tests.browser.test_queue import log_in

pytestmark = pytest.mark.django_db(transaction=True)

# The tab in the background, and a Notification that records what the page shows: headless
# Chromium has no notification centre to look at.
HIDDEN_TAB_WITH_ALERTS = """
Object.defineProperty(document, "hidden", {configurable: true, get: () => window.__hidden === true});
window.__alerts = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.__alerts.push({title, body: options && options.body}); }
  close() {}
};
"""


@pytest.mark.ladder(name="Blitz", slug="blitz", rematch_cooldown_minutes=0)
def test_a_pairing_in_a_background_tab_changes_the_title_and_alerts(new_page, screenshot, ladder, player, opponent):
    searching, pairing = new_page(DESKTOP), new_page(DESKTOP)
    searching.add_init_script(HIDDEN_TAB_WITH_ALERTS)
    for page, name in ((searching, "alice"), (pairing, "bob")):
        log_in(page, name)
        page.goto(ladder.get_absolute_url())

    searching.get_by_role("button", name="Find a match").click()
    expect(searching.get_by_text("Searching for an opponent")).to_be_visible()
    expect(searching.get_by_text("This browser alerts you when you are paired")).to_be_visible()
    searching.evaluate("window.__hidden = true")  # the player switches to another tab

    pairing.get_by_role("button", name="Find a match").click()
    expect(searching.get_by_text("Matched against")).to_be_visible(timeout=10_000)

    expect(searching).to_have_title("● Paired! " + searching.title().removeprefix("● Paired! "))
    assert searching.title().startswith("● Paired! ")
    alerts = searching.evaluate("window.__alerts")
    assert alerts == [
        {
            "title": "Paired: you play bob",
            "body": "Press Ready within the ready check, then play and report the result.",
        }
    ]

    searching.evaluate("window.__hidden = false; document.dispatchEvent(new Event('visibilitychange'))")
    assert not searching.title().startswith("● Paired!")  # back on the tab: the title is plain again
    screenshot(searching, "queue-paired-background")


@pytest.mark.ladder(name="Blitz", slug="blitz", rematch_cooldown_minutes=0)
def test_a_pairing_in_the_open_tab_alerts_nobody(new_page, ladder, player, opponent):
    searching, pairing = new_page(DESKTOP), new_page(DESKTOP)
    searching.add_init_script(HIDDEN_TAB_WITH_ALERTS)
    for page, name in ((searching, "alice"), (pairing, "bob")):
        log_in(page, name)
        page.goto(ladder.get_absolute_url())
    searching.get_by_role("button", name="Find a match").click()
    expect(searching.get_by_text("Searching for an opponent")).to_be_visible()
    pairing.get_by_role("button", name="Find a match").click()
    expect(searching.get_by_text("Matched against")).to_be_visible(timeout=10_000)

    assert searching.evaluate("window.__alerts") == []
    assert not searching.title().startswith("● Paired!")
