"""Phones and keyboards: pages fit a 390-pixel screen, wide tables say they scroll, focus shows."""

from __future__ import annotations

import itertools
import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.membership import ladder_join
from ratings.models import PlayerRating
from tests.browser.conftest import DESKTOP, PHONE, ROOT
from tests.factories import LadderFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

LONG_NAME = "a_thirty_character_username_xy"  # the longest a username may be


def page_fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_the_stylesheet_draws_a_focus_ring():
    css = (ROOT / "static" / "css" / "site.css").read_text(encoding="utf-8")

    rule = re.search(r"button:focus-visible[^{]*\{([^}]*)\}", css)
    assert rule, "no :focus-visible rule for buttons"
    assert re.search(r"outline:\s*[23]px solid", rule.group(1))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_focused_button_and_link_show_a_ring(new_page, scheme):
    page = new_page(DESKTOP)
    page.emulate_media(color_scheme=scheme)
    page.goto("/accounts/login/")

    for target in (page.get_by_role("button", name="Log in"), page.get_by_role("link", name="Help")):
        target.focus()
        style = target.evaluate("e => { const s = getComputedStyle(e); return [s.outlineStyle, s.outlineWidth]; }")
        assert style[0] == "solid" and float(style[1].removesuffix("px")) >= 2, style


def test_a_long_name_in_two_ladders_fits_a_phone(new_page, screenshot):
    player = UserFactory(username=LONG_NAME)
    for name in ("Pokémon Singles", "Widelands Team Championship"):
        ladder = LadderFactory(name=name)
        ladder_join(ladder=ladder, player=player)
    now = timezone.now()
    PlayerRating.objects.filter(player=player, ladder__name="Pokémon Singles").update(
        rd=60.0, games=5, wins=5, last_played_at=now, rd_as_of=now
    )
    page = new_page(PHONE)

    page.goto(player.get_absolute_url())

    expect(page.get_by_role("heading", name=LONG_NAME)).to_be_visible()
    assert page_fits(page)
    status = page.locator("table tbody .badge")
    expect(status).to_have_count(2)
    for badge in status.all():  # the ranked / provisional column is on the screen, not scrolled off
        box = badge.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390, box
    screenshot(page, "phone-profile-long-name")

    page.goto(f"/ladders/{ladder.slug}/players/{LONG_NAME}/")
    assert page_fits(page)
    screenshot(page, "phone-player-long-name")


def test_a_wide_table_shows_it_scrolls(new_page):
    """The leaderboard's Last game column is hidden on phones, so use the desktop header
    squeezed into a narrow box: any table wider than its box gets the edge shadow."""
    ladder = LadderFactory(name="Chess")
    ladder_join(ladder=ladder, player=UserFactory(username=LONG_NAME))
    page = new_page(PHONE)
    page.goto(ladder.get_absolute_url())

    wrap = page.locator(".table-wrap").first
    backgrounds = wrap.evaluate("e => getComputedStyle(e).backgroundImage")
    attachments = wrap.evaluate("e => getComputedStyle(e).backgroundAttachment")
    assert backgrounds.count("radial-gradient") == 2  # the shadows at both edges
    assert attachments.split(", ")[:2] == ["local", "local"]  # covers that scroll away with the table


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_home_page_cards_line_up(new_page, screenshot, device, name):
    for ladder_name in ("Chess Club", "Widelands Team Championship", "Go"):
        ladder = LadderFactory(name=ladder_name, description="")
        ladder_join(ladder=ladder, player=UserFactory())
    page = new_page(device)

    page.goto("/")

    assert page_fits(page)
    boxes = [card.bounding_box() for card in page.locator(".ladder-card").all()]
    assert len(boxes) == 3
    if name == "desktop":  # one row: the same top, the same height
        assert {round(box["y"]) for box in boxes} == {round(boxes[0]["y"])}
        assert {round(box["height"]) for box in boxes} == {round(boxes[0]["height"])}
    else:  # one column: the grid's gap, 16 pixels, between every two cards
        gaps = [round(b["y"] - (a["y"] + a["height"])) for a, b in itertools.pairwise(boxes)]
        assert gaps == [16, 16], gaps
    screenshot(page, f"home-cards-{name}")


def test_the_help_page_fits_a_phone_and_its_index_jumps_to_a_term(new_page, screenshot):
    page = new_page(PHONE)
    page.goto("/")  # axe checks every page a test opens, the help page included

    page.get_by_role("link", name="Help").click()
    page.get_by_role("link", name="RD (rating deviation)").click()

    assert page.evaluate("location.hash") == "#rd"
    expect(page.locator("#rd")).to_be_in_viewport()
    assert page_fits(page)
    screenshot(page, "phone-help")
