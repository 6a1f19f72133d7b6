"""A report with the ladder's match fields in a browser (docs/match-fields.md): typed and chosen with
the keyboard, an error shown next to its field, then the details on the match page and a filtered list."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ladder.models import MatchFieldValue
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_matches import log_in, no_horizontal_scroll
from tests.factories import member
from tests.ladder.match_fields_cast import add_fields

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_report_with_match_fields(new_page, screenshot, device, name, ladder, player, opponent):
    add_fields(ladder)
    page = new_page(device)
    log_in(page, "alice")
    page.goto(f"/ladders/{ladder.slug}/report/")

    page.get_by_label("Opponent", exact=True).fill("bob")
    page.get_by_text("I won").click()
    page.get_by_label("Map").fill("Crater")
    page.get_by_label("Tribe (You)").select_option("Empire")
    page.get_by_label("Tribe (Opponent)").select_option("Frisians")
    page.get_by_label("Game length").fill("soon")
    page.get_by_role("group", name="AI players took part").get_by_role("radio", name="No").check()
    page.get_by_label("Replay").fill("https://example.org/replays/1")
    screenshot(page, f"report-fields-{name}")
    assert no_horizontal_scroll(page)
    page.get_by_label("Replay").press("Enter")  # the keyboard submits the form

    error = page.locator(".field.has-error")
    expect(error).to_have_count(1)
    expect(error.get_by_role("alert")).to_contain_text("Game length is a duration such as 1:23:45")
    expect(page.get_by_label("Map")).to_have_value("Crater")  # what was typed stays
    screenshot(page, f"report-fields-error-{name}")
    page.get_by_label("Game length").fill("1:05:30")
    page.get_by_role("button", name="Report 1 v 1").click()

    expect(page.get_by_text("Reported. bob has 24 hours to confirm.")).to_be_visible()
    details = page.get_by_role("definition")
    expect(page.locator(".match-field-values")).to_contain_text("Crater")
    expect(details.filter(has_text="1:05:30")).to_have_count(1)
    expect(page.get_by_role("link", name="https://example.org/replays/1")).to_have_attribute(
        "rel", "nofollow noopener ugc"
    )
    expect(page.locator(".sides")).to_contain_text("Tribe: Empire")
    screenshot(page, f"match-fields-{name}")
    assert no_horizontal_scroll(page)
    assert MatchFieldValue.objects.count() == 6

    page.goto(f"/ladders/{ladder.slug}/matches/?tribe=Empire")
    expect(page.get_by_text("Showing matches with")).to_be_visible()
    expect(page.locator(".match-list tbody tr")).to_have_count(1)
    screenshot(page, f"matches-filtered-{name}")
    page.get_by_role("link", name="Remove the filter Tribe: Empire").click()
    expect(page.get_by_text("Showing matches with")).to_have_count(0)


def test_report_a_2v2_with_tribes_picked_from_selects_on_a_phone(new_page, screenshot, ladder, player, opponent):
    add_fields(ladder)
    ladder.allow_teams = True
    ladder.save()
    for username in ("carol", "dan"):
        member(ladder, username)
    page = new_page(PHONE)
    log_in(page, "alice")
    page.goto(f"/ladders/{ladder.slug}/report/")

    page.locator("#id_sides-0-players").fill("alice, carol")
    page.locator("#id_sides-0-placement").fill("1")
    page.locator("#id_sides-1-players").fill("bob, dan")
    page.locator("#id_sides-1-placement").fill("2")
    page.get_by_label("Player 1", exact=True).fill("carol")
    page.get_by_label("Tribe of player 1").select_option("Empire")
    page.get_by_label("Player 2", exact=True).fill("dan")
    page.get_by_label("Tribe of player 2").select_option("Frisians")
    typed, picked = (page.get_by_label(label, exact=True).bounding_box() for label in ("Player 2", "Tribe of player 2"))
    assert typed and picked and picked["y"] >= typed["y"] + typed["height"]  # the row stacks on a phone
    screenshot(page, "report-sides-tribes-phone")
    assert no_horizontal_scroll(page)
    page.get_by_role("button", name="Report game").click()

    expect(page.get_by_text("Reported. The other side has 24 hours to confirm.")).to_be_visible()
    expect(page.locator(".sides")).to_contain_text("Tribe: Empire")
    tribes = MatchFieldValue.objects.filter(field__name="tribe").values_list("player__username", "value")
    assert sorted(tribes) == [("carol", "Empire"), ("dan", "Frisians")]
