"""What the queue panel's live region tells a screen reader: a change of state (searching,
paired), not the seconds that each 2-s poll redraws."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from matchmaking.services import queue_join
from tests.browser.conftest import DESKTOP
from tests.browser.test_matches import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.ladder(rematch_cooldown_minutes=0)]

# The aria-live value that governs an element: its own, or its nearest ancestor's.
LIVE = "element => element.closest('[aria-live]')?.getAttribute('aria-live') ?? null"


def test_the_queue_panel_announces_states_and_not_the_polled_seconds(new_page, ladder, player, opponent):
    page = new_page(DESKTOP)
    log_in(page, player.username)
    queue_join(ladder=ladder, player=player)
    page.goto(f"/ladders/{ladder.slug}/")
    expect(page.get_by_text("Searching for an opponent")).to_be_visible()

    with page.expect_response(lambda response: "/queue/" in response.url and response.request.method == "GET"):
        pass  # one poll redraws the status
    assert page.locator("#queue-panel").evaluate(LIVE) == "polite"
    assert page.locator("#queue-status").evaluate(LIVE) == "off"
    assert page.locator("#queue-status .queue-status strong").evaluate(LIVE) == "off"  # the seconds

    queue_join(ladder=ladder, player=opponent)
    matched = page.get_by_text("Matched against")
    expect(matched).to_be_visible(timeout=10_000)
    assert matched.evaluate(LIVE) == "polite"
