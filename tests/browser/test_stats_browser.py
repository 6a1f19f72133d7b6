"""The statistics pages on a phone and a desktop: readable, no sideways scroll, and axe finds nothing."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import MatchField, MatchFieldValue
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_pages import no_horizontal_scroll
from tests.factories import LadderFactory, member

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_stats_versus_match_and_player_pages(new_page, screenshot, device, name):
    ladder = LadderFactory(name="Widelands League", slug="widelands-league", game="Widelands")
    maps = MatchField.objects.create(
        ladder=ladder, name="map", label="Map", kind="choice", choices=["Crater", "The Nile"]
    )
    tribes = MatchField.objects.create(
        ladder=ladder, name="tribe", label="Tribe", kind="choice", scope="player", choices=["Empire", "Frisians"]
    )
    alice, bob = member(ladder, "alice"), member(ladder, "bob")
    match = None
    for number, (places, map_name) in enumerate([((1, 2), "Crater"), ((2, 1), "The Nile"), ((1, 1), "Crater")]):
        match = svc.match_report(
            ladder=ladder, reporter=alice, sides=[SideInput([alice], places[0]), SideInput([bob], places[1])]
        )
        MatchFieldValue.objects.create(match=match, field=maps, value=map_name)
        MatchFieldValue.objects.create(match=match, field=tribes, player=alice, value="Empire")
        MatchFieldValue.objects.create(match=match, field=tribes, player=bob, value=["Frisians", "Empire"][number % 2])
        svc.match_confirm(match=match, user=bob, now=timezone.now())
    page = new_page(device)

    page.goto(f"/ladders/{ladder.slug}/")
    page.get_by_role("link", name="Statistics").click()
    expect(page.get_by_role("heading", name="Map")).to_be_visible()
    page.get_by_label("Game detail", exact=True).select_option("tribe")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("rowheader", name="Frisians")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, f"stats-tribe-{name}")

    page.goto(match.get_absolute_url())
    expect(page.get_by_role("heading", name="Head to head")).to_be_visible()
    page.get_by_role("link", name="All games between them").click()
    expect(page.get_by_role("heading", name="alice v bob")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, f"versus-{name}")

    page.goto(f"/ladders/{ladder.slug}/players/bob/")
    expect(page.get_by_role("heading", name="Record by game detail")).to_be_visible()
    assert no_horizontal_scroll(page)
