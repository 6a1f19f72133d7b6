"""Two players in two browsers: one reports a result, the other's bell counts it; opening it marks it read."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from notifications.models import Kind, Notification
from tests.browser.conftest import DESKTOP, PHONE, axe_check
from tests.browser.test_matches import log_in, no_horizontal_scroll

pytestmark = pytest.mark.django_db(transaction=True)

# What the bell's htmx poll does every 30 seconds, asked for now rather than waited for.
POLL = "htmx.ajax('GET', '/notifications/bell/', {target: '#header-counts', swap: 'outerHTML'})"


def bell(page, unread: int = 0):
    """The bell link, by the name a screen reader announces: "Notifications" and the unread count."""
    return page.get_by_role("link", name=f"Notifications {unread} unread" if unread else "Notifications", exact=True)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_the_bell_counts_a_report_and_the_page_marks_it_read(
    new_page, screenshot, device, name, ladder, player, opponent
):
    alice = new_page(device)
    log_in(alice, "alice")
    alice.goto("/ladders/chess/")
    expect(bell(alice)).to_be_visible()
    expect(alice.locator("#header-counts .count")).to_have_count(0)
    assert no_horizontal_scroll(alice)

    bob = new_page(device)
    log_in(bob, "bob")
    bob.goto("/ladders/chess/report/")
    bob.get_by_label("Opponent").fill("alice")
    bob.get_by_text("I won").click()
    bob.get_by_role("button", name="Report 1 v 1").click()
    expect(bob.get_by_text("Reported. alice has 24 hours to confirm.")).to_be_visible()

    alice.evaluate(POLL)
    expect(bell(alice, 1)).to_be_visible()
    expect(alice.get_by_role("link", name="To confirm 1 waiting")).to_be_visible()
    expect(alice).to_have_title("(1) Chess · Ladder")  # alerts.js: the tab shows the count too
    assert no_horizontal_scroll(alice)
    screenshot(alice, f"notifications-header-{name}")

    bell(alice, 1).click()
    expect(alice).to_have_url("/notifications/")
    expect(alice.get_by_role("heading", name="Notifications", level=1)).to_be_visible()
    item = alice.get_by_role("listitem").filter(has_text="A result awaits your answer")
    expect(item.get_by_text("bob reported a loss for you in Chess.")).to_be_visible()
    expect(item.get_by_text("New", exact=True)).to_be_visible()
    assert no_horizontal_scroll(alice)
    screenshot(alice, f"notifications-{name}")

    item.get_by_role("link", name="A result awaits your answer").click()
    match = Notification.objects.get(recipient=player, kind=Kind.RESULT_AWAITING).match
    expect(alice).to_have_url(f"/ladders/matches/{match.pk}/")
    expect(bell(alice)).to_be_visible()  # read: no count
    expect(alice.locator(".bell .count")).to_have_count(0)

    alice.go_back()
    alice.reload()
    expect(alice.get_by_text("New", exact=True)).to_have_count(0)
    expect(alice.get_by_role("button", name="Mark all read")).to_have_count(0)
    screenshot(alice, f"notifications-read-{name}")
    axe_check(alice)


def test_mark_all_read_by_keyboard_clears_the_bell(new_page, ladder, player, opponent):
    from notifications.services import notify

    for number in range(3):
        notify(
            Kind.SEARCH_EXPIRED, [player.pk], key=f"search:{number}", data={"ladder": "Chess", "ladder_slug": "chess"}
        )
    page = new_page(PHONE)
    log_in(page, "alice")
    page.goto("/notifications/")
    expect(bell(page, 3)).to_be_visible()

    page.get_by_role("button", name="Mark all read").focus()
    page.keyboard.press("Enter")

    expect(page.get_by_text("Marked 3 notifications read.")).to_be_visible()
    expect(bell(page)).to_be_visible()
    assert not Notification.objects.filter(recipient=player, read_at__isnull=True).exists()
