"""The matchmaking queue in two real browsers: both search, both see the pairing."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ladder.matches.reporting import match_report_result
from matchmaking.models import EntryStatus, QueueEntry
from tests.browser.conftest import DESKTOP, PHONE, axe_check
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, username):
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name=username)).to_be_visible()


@pytest.mark.ladder(name="Blitz", slug="blitz", rematch_cooldown_minutes=0)
def test_two_players_find_each_other_and_cancel_stops_polling(new_page, screenshot, ladder, player, opponent):
    player_page, opponent_page = new_page(PHONE), new_page(DESKTOP)
    for page, name in ((player_page, "alice"), (opponent_page, "bob")):
        log_in(page, name)
        page.goto(ladder.get_absolute_url())

    player_page.get_by_role("button", name="Find a match").click()
    expect(player_page.get_by_text("Searching for an opponent")).to_be_visible()
    screenshot(player_page, "queue-searching-phone")
    opponent_page.get_by_role("button", name="Find a match").click()

    expect(opponent_page.get_by_text("Matched against")).to_be_visible(timeout=10_000)
    expect(opponent_page.locator("#queue-panel")).to_contain_text("alice")
    expect(player_page.get_by_text("Matched against")).to_be_visible(timeout=10_000)
    expect(player_page.locator("#queue-panel")).to_contain_text("bob")
    screenshot(player_page, "queue-ready-check-phone")
    player_page.get_by_role("button", name="Ready").click()
    expect(opponent_page.locator("#queue-status")).to_contain_text("alice", timeout=10_000)
    opponent_page.get_by_role("button", name="Ready").click()
    expect(player_page.get_by_text("Both ready: play")).to_be_visible(timeout=10_000)
    expect(opponent_page.get_by_text("Both ready: play")).to_be_visible(timeout=10_000)
    screenshot(player_page, "queue-matched-phone")
    # One game at a time: no new search while this one is to be played; the panel only watches it.
    expect(player_page.get_by_text("One game at a time")).to_be_visible()
    assert player_page.get_by_role("button", name="Search again").count() == 0
    assert player_page.locator("#queue-panel [data-hx-trigger]").count() == 1  # the watch, every 3 s

    match = QueueEntry.objects.get(player=opponent, status=EntryStatus.MATCHED).match
    match_report_result(match=match, reporter=opponent, placements=[1, 2])  # bob reports on his phone
    expect(player_page.get_by_text("Your last match:")).to_be_visible(timeout=10_000)  # without a reload
    player_page.get_by_role("button", name="Find a match").click()
    expect(player_page.get_by_text("Searching for an opponent")).to_be_visible()
    player_page.get_by_role("button", name="Cancel").click()
    expect(player_page.get_by_text("You left the queue.")).to_be_visible()
    axe_check(player_page)
    requests: list[str] = []
    player_page.on("request", lambda request: requests.append(request.url))
    player_page.wait_for_timeout(4_500)
    assert not [url for url in requests if "/queue/" in url], requests
    screenshot(opponent_page, "queue-matched-desktop")
