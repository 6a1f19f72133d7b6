"""The site under its Content-Security-Policy in Chromium: no page, htmx swap, admin page
or API docs page is refused anything. Chromium reports each refusal on the console and as
a ``securitypolicyviolation`` event; either fails the test."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ladder.models import Ladder
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)

RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(`${event.violatedDirective} blocked ${event.blockedURI || "inline"} on ${location.pathname}`);
});
"""


@pytest.fixture
def watched(new_page):
    """A page that collects every policy refusal: console messages and violation events."""
    complaints: list[str] = []

    def make(device=None):
        page = new_page(device)
        page.add_init_script(RECORD_VIOLATIONS)
        page.on(
            "console",
            lambda message: (
                complaints.append(f"{page.url}: {message.text}")
                if "Content Security Policy" in message.text or "Permissions-Policy" in message.text
                else None
            ),
        )

        def violations() -> list[str]:
            """What was refused since the last call (the event list is the current document's)."""
            found = complaints + page.evaluate("window.__violations.splice(0)")
            complaints.clear()
            return found

        page.violations = violations
        return page

    return make


def log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name=username, exact=True)).to_be_visible()


def visit(page, path: str, seen: list[str]) -> None:
    """Open ``path`` and keep what was refused on it (the page's own list starts anew)."""
    response = page.goto(path)
    assert response is not None and response.ok, path
    page.wait_for_load_state("networkidle")
    seen.extend(page.violations())


def test_the_watch_sees_a_refused_inline_style(watched):
    page = watched()
    page.goto("/")

    page.evaluate("document.head.insertAdjacentHTML('beforeend', '<style>body{color:red}</style>')")
    page.wait_for_timeout(200)

    assert any("style-src" in complaint for complaint in page.violations())


@pytest.mark.ladder(name="Chess Club", slug="chess-club", rematch_cooldown_minutes=0)
@pytest.mark.usefixtures("player", "opponent", "root")
def test_pages_htmx_and_the_admin_run_under_the_policy(watched):
    page = watched()
    seen: list[str] = []

    for path in ("/", "/accounts/login/", "/accounts/signup/", "/ladders/chess-club/", "/players/alice/"):
        visit(page, path, seen)
    log_in(page, "alice")
    visit(page, "/ladders/chess-club/", seen)
    page.locator("#lb-q").fill("bo")  # the leaderboard search swaps its panel with htmx
    expect(page.locator("#leaderboard-panel")).to_contain_text("bob")
    page.get_by_role("button", name="Find a match").click()  # the queue panel polls with htmx
    expect(page.get_by_text("Searching for an opponent")).to_be_visible()
    page.wait_for_timeout(2_500)
    page.get_by_role("button", name="Cancel").click()
    expect(page.get_by_text("You left the queue.")).to_be_visible()
    seen.extend(page.violations())
    for path in (
        "/ladders/chess-club/report/",
        "/accounts/settings/",
        "/accounts/tokens/",
        "/ladders/matches/awaiting/",
    ):
        visit(page, path, seen)
    page.goto("/accounts/tokens/")
    page.get_by_label("Name").fill("bot")
    page.get_by_role("button", name="Create token").click()
    expect(page.locator("#new-token")).to_be_visible()
    seen.extend(page.violations())

    seen.extend(page.violations())
    page = watched()
    log_in(page, "root")
    for path in (
        "/admin/",
        "/admin/accounts/user/",
        "/admin/accounts/user/?q=alice",
        f"/admin/ladder/ladder/{Ladder.objects.get().pk}/change/",
        "/admin/ladder/match/",
        "/admin/ladder/ladder/add/",
    ):
        visit(page, path, seen)

    assert seen == []


# Redoc's menu shows a logo from Redocly's CDN; the docs' policy keeps the browser on the
# site (api/docs.py), so that one refusal is the policy at work.
MEANT_TO_BE_REFUSED = ("https://cdn.redoc.ly/",)


@pytest.mark.parametrize("path", ["/api/docs/", "/api/docs/redoc/"])
def test_the_api_docs_run_under_their_own_policy(watched, path):
    page = watched()
    seen: list[str] = []

    visit(page, path, seen)

    assert [complaint for complaint in seen if not any(url in complaint for url in MEANT_TO_BE_REFUSED)] == []
