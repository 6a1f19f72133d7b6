"""A moderator corrects a match's map from the Moderator box with the keyboard, on a phone and a desktop.

axe-core checks every page on the way (the browser fixtures), the refused form included.
"""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import MatchFieldValue
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_matches import log_in, no_horizontal_scroll
from tests.stats.test_aggregates import fields_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_moderator_corrects_the_map_with_the_keyboard(
    new_page, screenshot, device, name, ladder, player, opponent, moderator_anywhere
):
    map_field, tribe_field, _ = fields_of(ladder)
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    MatchFieldValue.objects.create(match=match, field=map_field, value="Crater")
    MatchFieldValue.objects.create(match=match, field=tribe_field, player=player, value="Empire")
    svc.match_confirm(match=match, user=opponent, now=timezone.now())
    page = new_page(device)
    log_in(page, "mod")
    page.goto(match.get_absolute_url())

    box = page.locator("#moderator").locator("..")
    box.get_by_text("Edit game details…").press("Enter")
    expect(box.get_by_label("Map")).to_have_value("Crater")
    box.get_by_label("Map").select_option("The Nile")
    box.get_by_label("Replay").fill("ftp://replays.example/1")
    box.get_by_label("Reason for the change").fill("The reporter picked the wrong map.")
    box.get_by_role("button", name="Save the game details").press("Enter")

    box = page.locator("#moderator").locator("..")
    expect(box.get_by_text("Replay is a link starting with http://")).to_be_visible()  # the form stays open
    assert no_horizontal_scroll(page)
    screenshot(page, f"fields-edit-refused-{name}")
    box.get_by_label("Replay").fill("")
    box.get_by_role("button", name="Save the game details").press("Enter")

    expect(page.get_by_text("Game details corrected.")).to_be_visible()
    assert MatchFieldValue.objects.get(match=match, field=map_field).value == "The Nile"
