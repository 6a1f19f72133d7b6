"""The pages as a person sees them, on a phone and a desktop."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ladder.membership import ladder_join
from tests.browser.conftest import DESKTOP, PHONE
from tests.factories import PASSWORD, LadderFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_home_and_ladder_page_fit_the_screen(new_page, screenshot, device, name):
    ladder = LadderFactory(name="Pokémon Singles", game="Pokémon Showdown")
    for n in range(3):
        ladder_join(ladder=ladder, player=UserFactory(username=f"trainer{n}"))
    page = new_page(device)

    page.goto("/")
    expect(page.get_by_role("heading", name="Pokémon Singles")).to_be_visible()
    assert no_horizontal_scroll(page)
    assert page.evaluate("typeof window.htmx") == "object", "htmx is served by the site itself"
    screenshot(page, f"home-{name}")

    page.get_by_role("link", name="Pokémon Singles").click()
    expect(page.get_by_text("No ranked players yet")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, f"ladder-{name}")


@pytest.mark.ladder(name="Chess Club", slug="chess-club")
@pytest.mark.usefixtures("ladder")
def test_sign_up_join_and_leave_in_the_browser(new_page, screenshot):
    page = new_page(PHONE)

    page.goto("/accounts/signup/")
    page.get_by_label("Username").fill("bad!name")
    page.get_by_label("Password", exact=True).fill("short")
    page.get_by_label("Password confirmation").fill("short")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_text("“!” is not allowed")).to_be_visible()
    screenshot(page, "signup-errors-phone")

    page.get_by_label("Username").fill("Newbie")
    page.get_by_label("Password", exact=True).fill("a-long-unusual-pass")
    page.get_by_label("Password confirmation").fill("a-long-unusual-pass")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_text("Welcome, Newbie!")).to_be_visible()

    page.get_by_role("link", name="Chess Club").click()
    page.get_by_role("button", name="Join this ladder").click()
    expect(page.get_by_text("Welcome to Chess Club!")).to_be_visible()
    expect(page.get_by_role("heading", name="Your standing")).to_be_visible()
    screenshot(page, "ladder-member-phone")

    page.get_by_role("link", name="Leave this ladder…").click()
    expect(page.get_by_role("heading", name="Leave Chess Club?")).to_be_visible()
    page.get_by_role("button", name="Leave Chess Club").click()
    expect(page.get_by_text("You left Chess Club.")).to_be_visible()


@pytest.mark.ladder(name="Chess Club")
def test_login_and_profile(new_page, screenshot, player):
    player.about = "Opening theory nerd."
    player.save(update_fields=["about"])
    page = new_page(DESKTOP)

    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("ALICE")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="alice").click()

    expect(page.get_by_role("heading", name="alice")).to_be_visible()
    expect(page.get_by_text("Opening theory nerd.")).to_be_visible()
    expect(page.get_by_text("provisional")).to_be_visible()
    screenshot(page, "profile-desktop")
