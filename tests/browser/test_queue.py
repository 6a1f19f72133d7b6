"""The matchmaking queue in two real browsers: both search, both see the pairing."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.factories import PASSWORD, LadderFactory, member

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, username):
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name=username)).to_be_visible()


def test_two_players_find_each_other_and_cancel_stops_polling(new_page, screenshot):
    ladder = LadderFactory(name="Blitz", slug="blitz", rematch_cooldown_minutes=0)
    member(ladder, "alice")
    member(ladder, "bob")
    alice, bob = new_page(PHONE), new_page(DESKTOP)
    for page, name in ((alice, "alice"), (bob, "bob")):
        log_in(page, name)
        page.goto(ladder.get_absolute_url())

    alice.get_by_role("button", name="Find a match").click()
    expect(alice.get_by_text("Searching for an opponent")).to_be_visible()
    screenshot(alice, "queue-searching-phone")
    bob.get_by_role("button", name="Find a match").click()

    expect(bob.get_by_text("Matched against")).to_be_visible(timeout=10_000)
    expect(bob.locator("#queue-panel")).to_contain_text("alice")
    expect(alice.get_by_text("Matched against")).to_be_visible(timeout=10_000)
    expect(alice.locator("#queue-panel")).to_contain_text("bob")
    screenshot(alice, "queue-matched-phone")
    assert alice.locator("#queue-panel[hx-trigger]").count() == 0  # polling stopped

    alice.get_by_role("button", name="Search again").click()
    expect(alice.get_by_text("Searching for an opponent")).to_be_visible()
    alice.get_by_role("button", name="Cancel").click()
    expect(alice.get_by_text("You left the queue.")).to_be_visible()
    requests: list[str] = []
    alice.on("request", lambda request: requests.append(request.url))
    alice.wait_for_timeout(4_500)
    assert not [url for url in requests if "/queue/" in url], requests
    screenshot(bob, "queue-matched-desktop")
