"""The rank-change column, the movers box and the rank chart, on a phone and a desktop."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_pages import no_horizontal_scroll
from tests.factories import LadderFactory, bulk_users
from tests.ladder.test_snapshot_pages import ranked_member, snap

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_rank_changes_movers_and_rank_history(new_page, screenshot, device, name):
    ladder = LadderFactory(name="Go Club", slug="go-club", game="Go")
    users = bulk_users("go", 8)
    for n, user in enumerate(users):
        ranked_member(ladder, user, 1900 - 40 * n)
    today = timezone.localdate()
    for days in range(8, 0, -1):  # the last player climbs a place a night
        order = list(users)
        climber = order.pop()
        order.insert(max(0, days - 1), climber)
        snap(ladder, today - timedelta(days=days), order)
    page = new_page(device)

    page.goto(f"/ladders/{ladder.slug}/")
    board = page.locator("#leaderboard-panel")
    expect(board.get_by_text("new", exact=True)).to_have_count(0)
    expect(board.locator(".move.down").first).to_be_visible()
    expect(page.get_by_role("heading", name="Biggest climbers")).to_be_visible()
    movers = page.locator("ol.movers li")
    expect(movers.first).to_contain_text(users[-1].username)
    expect(movers.first).to_contain_text("▲7")
    assert no_horizontal_scroll(page)
    screenshot(page, f"ladder-rank-changes-{name}")

    movers.first.get_by_role("link").click()
    expect(page.get_by_role("heading", name="Rank history")).to_be_visible()
    chart = page.locator("svg.rank-narrow" if device is PHONE else "svg.rank-wide")
    expect(chart).to_be_visible()
    expect(chart.locator("circle.point")).to_have_count(8)
    assert no_horizontal_scroll(page)
    screenshot(page, f"player-rank-history-{name}")
