"""Layout a person notices on a phone: nothing moves as a page loads, targets are big enough,
a table wider than the screen says it scrolls."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from notifications.models import Kind, Notification
from tests.browser.conftest import PHONE
from tests.browser.test_matches import history, log_in

pytestmark = pytest.mark.django_db(transaction=True)

# The page's cumulative layout shift so far (what Lighthouse reports as CLS), from the
# layout-shift entries Chromium buffered since the navigation.
LAYOUT_SHIFT = """() => new Promise(resolve => {
  let total = 0;
  new PerformanceObserver(list => {
    for (const entry of list.getEntries()) if (!entry.hadRecentInput) total += entry.value;
  }).observe({type: "layout-shift", buffered: true});
  setTimeout(() => resolve(total), 500);
})"""


def test_the_notifications_page_does_not_move_as_it_loads(new_page, player):
    for number in range(6):
        Notification.objects.create(
            recipient=player, kind=Kind.PAIRED, key=f"match:{number}", created_at=timezone.now()
        )
    page = new_page(PHONE)
    log_in(page, player.username)

    page.goto("/notifications/", wait_until="load")

    expect(page.get_by_role("button", name="Alert me in this browser when I am paired")).to_be_visible()
    assert page.evaluate(LAYOUT_SHIFT) == 0


def test_the_glossary_index_links_are_targets_of_24_px_at_least(new_page):
    page = new_page(PHONE)
    page.goto("/help/")

    links = page.locator(".glossary-index a")
    assert links.count() > 10
    heights = [links.nth(index).bounding_box()["height"] for index in range(links.count())]
    assert min(heights) >= 24, heights


# Each table box on the page that is narrower than its table: its tab stop, its name, whether
# the hint above it shows.
WIDE_TABLES = """() => [...document.querySelectorAll(".table-wrap")]
  .filter(wrap => wrap.scrollWidth > wrap.clientWidth + 1)
  .map(wrap => ({
    tabindex: wrap.getAttribute("tabindex"),
    label: wrap.getAttribute("aria-label") || "",
    hint: !!(wrap.previousElementSibling && wrap.previousElementSibling.matches(".scroll-hint")
             && wrap.previousElementSibling.offsetHeight > 0),
  }))"""


def test_tables_wider_than_a_phone_say_they_scroll_and_scroll_by_keyboard(new_page, ladder, player, opponent):
    history(ladder, player, opponent)
    page = new_page(PHONE)
    log_in(page, player.username)

    for path in (f"/ladders/{ladder.slug}/matches/", f"/ladders/{ladder.slug}/"):
        page.goto(path)
        wide = page.evaluate(WIDE_TABLES)
        assert wide, f"{path}: no table wider than the phone"
        for table in wide:
            assert table == {"tabindex": "0", "label": table["label"], "hint": True}, (path, table)
            assert table["label"].endswith(", scrolls sideways"), (path, table)

    page.goto(f"/ladders/{ladder.slug}/matches/")
    box = page.get_by_role("region", name="Matches, scrolls sideways")
    box.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(box).to_be_focused()
    page.wait_for_function("document.querySelector('.table-wrap').scrollLeft > 0")
