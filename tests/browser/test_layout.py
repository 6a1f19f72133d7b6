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


def test_the_notifications_list_stays_where_the_html_put_it_when_the_script_runs(new_page, player):
    """The shift a person sees when a script reveals something above the list after the first
    paint: the list must be at the same place before the page's script runs (here: never
    runs) and after."""
    for number in range(6):
        Notification.objects.create(
            recipient=player, kind=Kind.PAIRED, key=f"match:{number}", created_at=timezone.now()
        )
    page = new_page(PHONE)
    log_in(page, player.username)

    page.route("**/js/alerts*.js", lambda route: route.abort())
    page.goto("/notifications/", wait_until="load")
    before_script = page.locator("ol.notifications").bounding_box()
    page.unroute("**/js/alerts*.js")
    page.goto("/notifications/", wait_until="load")
    expect(page.get_by_role("button", name="Alert me in this browser when I am paired")).to_be_visible()

    assert page.locator("ol.notifications").bounding_box() == before_script


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
    # The keyboard's scroll is smooth, over a few frames. Polled from here: Playwright's
    # wait_for_function evaluates a string in the page, which its CSP refuses when it polls.
    scrolled = 0
    for _ in range(50):
        scrolled = box.evaluate("box => box.scrollLeft")
        if scrolled > 0:
            break
        page.wait_for_timeout(100)
    assert scrolled > 0
