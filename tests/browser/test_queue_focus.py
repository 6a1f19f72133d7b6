"""A keyboard user searching for a match keeps their place: the 2-second polls do not move focus."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP
from tests.browser.test_queue import log_in

pytestmark = pytest.mark.django_db(transaction=True)

FOCUSED = "() => { const e = document.activeElement; return e ? e.tagName + ' ' + e.textContent.trim() : null; }"


@pytest.mark.ladder(name="Blitz", slug="blitz")
def test_focus_stays_on_cancel_through_polls_and_enter_cancels(new_page, ladder, player):
    page = new_page(DESKTOP)
    log_in(page, "alice")
    page.goto(ladder.get_absolute_url())
    page.get_by_role("button", name="Find a match").click()
    expect(page.get_by_text("Searching for an opponent")).to_be_visible()
    live_region = page.locator("#queue-panel[aria-live]")
    live_region.evaluate("section => { section.dataset.original = 'yes'; }")

    expect(page.get_by_role("button", name="Cancel")).to_be_focused()  # the panel's button kept focus
    page.locator("#queue-panel h2").click()  # start again from the heading, as a reader would
    seen = []
    for _ in range(5):  # Tab to the Cancel button
        page.keyboard.press("Tab")
        seen.append(page.evaluate(FOCUSED))
        if seen[-1] == "BUTTON Cancel":
            break
    else:
        pytest.fail(f"Tab never reached the Cancel button: {seen}")
    cancel = page.get_by_role("button", name="Cancel")
    polls: list[str] = []
    page.on("response", lambda response: polls.append(response.url) if "/queue/" in response.url else None)
    page.wait_for_timeout(4_500)  # two polls and a half

    assert len(polls) >= 2, polls
    expect(cancel).to_be_focused()
    assert page.evaluate(FOCUSED) == "BUTTON Cancel"
    assert live_region.get_attribute("data-original") == "yes"  # the live region itself was never swapped
    page.keyboard.press("Enter")
    expect(page.get_by_text("You left the queue.")).to_be_visible()
    expect(page.get_by_role("button", name="Find a match")).to_be_focused()  # and back again
