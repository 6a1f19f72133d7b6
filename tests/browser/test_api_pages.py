"""The API's pages in Chromium: the token page on a phone, and the interactive docs."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_pages import no_horizontal_scroll
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_a_token_is_created_shown_once_used_and_revoked_on_a_phone(new_page, screenshot, player):
    page = new_page(PHONE)
    log_in(page, "alice")

    page.goto("/accounts/tokens/")
    expect(page.get_by_text("No tokens yet.")).to_be_visible()
    page.get_by_label("Name").fill("my bot on the VPS")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("#new-token").inner_text()
    assert secret.startswith("lad_")
    expect(page.get_by_role("cell", name="my bot on the VPS")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, "api-tokens-phone")

    me = page.request.get("/api/v1/me/", headers={"Authorization": f"Bearer {secret}"})
    assert me.status == 200 and me.json()["username"] == "alice"

    page.reload()
    assert secret not in page.content(), "the secret is shown once"
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("cell", name="revoked")).to_be_visible()
    assert page.request.get("/api/v1/me/", headers={"Authorization": f"Bearer {secret}"}).status == 401


@pytest.mark.parametrize(("path", "ready"), [("/api/docs/", ".opblock"), ("/api/docs/redoc/", "[data-section-id]")])
@pytest.mark.usefixtures("ladder")
def test_the_interactive_docs_render_from_the_site_alone(new_page, screenshot, live_server, path, ready):
    page = new_page(DESKTOP)
    site = urlsplit(live_server.url).netloc
    answered: set[str] = set()
    page.on("response", lambda response: answered.add(urlsplit(response.url).netloc))
    refused: dict[str, str] = {}
    page.on("requestfailed", lambda request: refused.update({urlsplit(request.url).netloc: request.failure or ""}))

    page.goto(path)
    page.locator(ready).first.wait_for(timeout=30_000)  # Redoc lays out the whole schema first
    expect(page.get_by_text("Ladder API").first).to_be_visible()
    expect(page.get_by_text("/api/v1/matches/", exact=True).first).to_be_attached()
    page.wait_for_load_state("networkidle")
    assert answered - {""} == {site}, f"the page reached beyond the site: {answered}"  # "": data: and blob:
    outside = {host: failure for host, failure in refused.items() if host not in ("", site)}
    assert all("csp" in failure.lower() for failure in outside.values()), outside  # Redoc's menu logo: blocked
    screenshot(page, "api-docs" if path == "/api/docs/" else "api-redoc")
