"""A leaderboard search over the search limit, in the browser: the page says why and when to retry."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_pages import no_horizontal_scroll
from tests.factories import LadderFactory
from tests.ladder.test_pages import crowd

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_a_search_over_the_limit_shows_the_leaderboard_and_when_to_retry(new_page, screenshot, settings, device, name):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "search": "2/minute"}
    ladder = LadderFactory(name="Go Club", slug="go-club", game="Go")
    crowd(ladder, 12)
    page = new_page(device)
    page.goto(f"/ladders/{ladder.slug}/")
    board = page.locator("#leaderboard-panel")
    search = page.get_by_label("Search players by name")

    for query, shown in (("p00", "p009"), ("p01", "p011")):  # two new searches: within the limit
        search.fill(query)
        expect(board.get_by_role("link", name=shown)).to_be_visible()
        expect(board.get_by_role("link", name="p000" if query == "p01" else "p010")).to_have_count(0)
    search.fill("p010")  # the third: htmx gets a 429 and loads the whole page, which explains it

    refused = page.get_by_role("alert")
    expect(refused).to_contain_text("Too many new searches from you for now: you can search again in")
    expect(page).to_have_url(re.compile(rf"/ladders/{ladder.slug}/\?q=p010(&|$)"))
    expect(page.get_by_label("Search players by name")).to_have_value("p010")
    expect(board.get_by_role("link", name="p011")).to_be_visible()  # the whole leaderboard meanwhile
    assert no_horizontal_scroll(page)
    screenshot(page, f"ladder-search-limit-{name}")

    refused.get_by_role("link", name="See every page").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page).to_have_url(re.compile(rf"/ladders/{ladder.slug}/$"))
