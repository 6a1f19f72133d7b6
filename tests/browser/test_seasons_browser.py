"""The seasons' pages on a phone and a desktop: readable, no sideways scroll, and axe finds nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from seasons.models import BadgeTier, SeasonSettings, SeasonStatus
from seasons.services import season_close
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_pages import no_horizontal_scroll
from tests.factories import LadderFactory
from tests.seasons.helpers import ranked_members, season

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_season_selector_standings_and_a_players_seasons(new_page, screenshot, device, name):
    ladder = LadderFactory(name="Widelands League", slug="widelands-league", game="Widelands")
    now = timezone.now()
    users = ranked_members(ladder, [1500.0 + 15 * n for n in range(8)], prefix="tribe", at=now)
    SeasonSettings.objects.create(ladder=ladder, factor=1.0)
    BadgeTier.objects.create(ladder=ladder, name="Champion", top_n=1)
    BadgeTier.objects.create(ladder=ladder, name="Top 3", top_n=3, basis="peak")
    done = season(ladder, "Spring 2026", now - timedelta(days=40), now - timedelta(hours=2))
    season_close(season=done, now=now)
    season(ladder, "Summer 2026", now - timedelta(hours=2), now + timedelta(days=80), SeasonStatus.RUNNING)
    page = new_page(device)

    page.goto(f"/ladders/{ladder.slug}/")
    expect(page.get_by_role("heading", name="Seasons")).to_be_visible()
    expect(page.locator("#leaderboard-panel").get_by_text("★ Champion")).to_have_count(1)
    assert no_horizontal_scroll(page)
    screenshot(page, f"ladder-seasons-{name}")

    page.get_by_role("link", name="Spring 2026").first.click()
    expect(page.get_by_role("heading", name="Final standings")).to_be_visible()
    expect(page.get_by_role("term").filter(has_text="Peak rank")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, f"season-standings-{name}")

    page.goto(f"/ladders/{ladder.slug}/players/{users[7].username}/")
    expect(page.get_by_role("heading", name="Seasons")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, f"player-seasons-{name}")
