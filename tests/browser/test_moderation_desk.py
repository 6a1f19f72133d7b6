"""A moderator opens the desk from the header, goes to a disputed match and voids it from its page.

axe-core checks every page on the way (the browser fixtures), on a phone and a desktop.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ladder.models import Match, MatchStatus
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_matches import log_in, no_horizontal_scroll
from tests.ladder.test_moderation_desk import dispute, game

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_moderator_decides_a_dispute_from_the_desk(
    new_page, screenshot, device, name, ladder, player, opponent, moderator_anywhere
):
    match = dispute(
        game(ladder, player, opponent, status=MatchStatus.DISPUTED), opponent, "I won: the replay shows it. " * 5
    )
    page = new_page(device)
    log_in(page, "mod")

    page.get_by_role("link", name="Moderation", exact=True).click()
    expect(page.get_by_role("heading", name="Moderation desk")).to_be_visible()
    expect(page.get_by_role("heading", name="Disputed results 1")).to_be_visible()
    expect(page.get_by_text("I won: the replay shows it.").first).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, f"moderation-desk-{name}")

    page.get_by_role("link", name="Decide").first.click()
    box = page.locator("#moderator").locator("..")
    expect(box.get_by_text("Disputed").first).to_be_visible()
    box.get_by_text("Void…").click()
    box.get_by_role("textbox", name="Reason", exact=True).fill("Played on the wrong ladder.")
    box.get_by_role("button", name="Void the match").click()

    expect(page.get_by_text("Voided. The result no longer counts")).to_be_visible()
    assert Match.objects.get(pk=match.pk).status == MatchStatus.VOID
    screenshot(page, f"moderator-box-{name}")
