"""Signing in with Lichess, then linking Discord, in Chromium on a phone and a desktop, against
stand-in providers on loopback (``tests/accounts/oauth_provider.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from accounts.models import LinkedIdentity, User
from tests.accounts.oauth_provider import StandIn, discord_account, lichess_account, serve
from tests.browser.conftest import DESKTOP, PHONE

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def lichess(settings) -> Iterator[StandIn]:
    with serve(settings, "lichess") as stand_in:
        yield stand_in


@pytest.fixture
def discord(settings) -> Iterator[StandIn]:
    with serve(settings, "discord") as stand_in:
        yield stand_in


def both_schemes(page, screenshot, name: str, section: str = "") -> None:
    """The page in the light and the dark scheme; with ``section`` (a heading), that section alone too."""
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        screenshot(page, f"{name}-{scheme}")
        if section:
            part = page.locator("section", has=page.get_by_role("heading", name=section))
            screenshot(page, f"{name}-section-{scheme}", element=part)
    page.emulate_media(color_scheme="light")


@pytest.mark.parametrize(("device", "size"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_sign_in_with_lichess_choose_a_name_then_link_discord(new_page, screenshot, lichess, discord, device, size):
    lichess.account = lichess_account("Magnus", "magnus@example.org")
    discord.account = discord_account("4242", "magnus_d")
    page = new_page(device)
    page.goto("/accounts/login/")
    both_schemes(page, screenshot, f"oauth-login-{size}")

    page.get_by_role("button", name="Sign in with Lichess").click()
    expect(page.get_by_role("heading", name="Lichess stand-in")).to_be_visible()
    page.get_by_role("button", name="Approve").click()

    expect(page.get_by_role("heading", name="Choose your name")).to_be_visible()
    expect(page.get_by_label("Username")).to_have_value("Magnus")
    expect(page.get_by_label("Email")).to_have_value("magnus@example.org")
    both_schemes(page, screenshot, f"oauth-choose-name-{size}")
    page.get_by_label("Username").press("Enter")  # by keyboard

    expect(page.get_by_text("Welcome, Magnus!")).to_be_visible()
    user = User.objects.get(username="Magnus")
    assert not user.has_usable_password() and user.has_verified_email

    page.goto("/accounts/settings/")
    page.get_by_role("button", name="Link Discord").click()
    expect(page.get_by_role("heading", name="Discord stand-in")).to_be_visible()
    page.get_by_role("button", name="Approve").click()

    expect(page.get_by_text("Discord is linked: you can sign in with magnus_d there.")).to_be_visible()
    expect(page.get_by_role("button", name="Unlink Discord")).to_be_visible()
    both_schemes(page, screenshot, f"oauth-settings-{size}", section="Linked accounts")
    assert set(LinkedIdentity.objects.filter(user=user).values_list("provider", "uid")) == {
        ("lichess", "magnus"),
        ("discord", "4242"),
    }
