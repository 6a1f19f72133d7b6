"""Every page of the site through axe-core (WCAG 2.1 A and AA), as a visitor, a player and
a moderator, on a phone and a desktop, each in the light and the dark colour scheme.

``new_page`` checks each page a test opens and ``screenshot`` each state it keeps
(tests/browser/conftest.py); here each of the site's own pages and states is visited once
(the admin and the API docs are not the site's: ``AXE_SKIPS``), and the test reports all
violations together, page by page.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report_result
from ladder.membership import ladder_join
from ladder.moderation.reports import player_report_file as file_report
from matchmaking import lifecycle
from matchmaking.models import EntryStatus, QueueEntry
from matchmaking.services import queue_join
from tests.browser.conftest import DESKTOP, PHONE, axe_check
from tests.factories import PASSWORD, LadderFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.ladder(rematch_cooldown_minutes=0)]

DEVICES = pytest.mark.parametrize("device", [PHONE, DESKTOP], ids=["phone", "desktop"])


@pytest.fixture
def scene(ladder, player, opponent):
    """Chess with a played history, one result disputed and two of bob's waiting for alice;
    a team ladder beside it. Returns the matches by what they show."""
    carol = UserFactory(username="carol")
    ladder_join(ladder=ladder, player=carol, now=timezone.now() - timedelta(days=30))
    start = timezone.now() - timedelta(days=8)
    confirmed = None
    for day, alice_won in enumerate([True, False, True, True]):
        winner, loser = (player, opponent) if alice_won else (opponent, player)
        confirmed = report(ladder, winner, loser, start + timedelta(days=day))
        svc.match_confirm(match=confirmed, user=loser)
    disputed = report(ladder, player, carol, start + timedelta(days=5))
    svc.match_dispute(match=disputed, user=carol, reason="I won that game.\nCheck the replay.")
    pending = [report(ladder, opponent, player, start + timedelta(days=6, hours=hour)) for hour in (1, 2)]
    LadderFactory(name="Widelands Teams", slug="widelands", allow_teams=True, allow_free_for_all=True)
    return {"confirmed": confirmed, "disputed": disputed, "pending": pending[0]}


def report(ladder, winner, loser, played_at):
    return svc.match_report(
        ladder=ladder, reporter=winner, sides=[SideInput([winner], 1), SideInput([loser], 2)], played_at=played_at
    )


@pytest.fixture
def swept(new_page):
    """A page whose axe violations are gathered (``page.axe_found``) rather than failing at once."""

    def make(device):
        page = new_page(device)
        page.axe_found = []
        return page

    return make


def log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name=username, exact=True)).to_be_visible()


def visit(page, path: str) -> None:
    """Open ``path`` (``new_page`` runs axe on it): it must be there, or nothing is checked."""
    response = page.goto(path)
    assert response is not None and response.ok, f"{path}: {response and response.status}"


def no_violations(page) -> None:
    if page.axe_found:
        pytest.fail("\n\n".join(page.axe_found), pytrace=False)


# Text in the light theme's ink, which reads on white but not on the dark theme's surface;
# set through the CSSOM, which the site's policy allows (a style attribute it would refuse).
DARK_ONLY_CONTRAST_FAILURE = """() => {
  const text = document.createElement("p");
  text.textContent = "Fine by day, unreadable by night";
  text.style.color = "#1d2130";
  document.querySelector("main").append(text);
}"""


def test_the_check_fails_on_a_violation_in_either_colour_scheme(new_page):
    page = new_page(DESKTOP)
    page.goto("/")  # checked as it is: no violation
    page.evaluate(
        "document.querySelector('main').insertAdjacentHTML('beforeend', '<img src=\"/static/img/favicon.svg\">')"
    )

    with pytest.raises(pytest.fail.Exception, match=r"image-alt \(critical\)") as light:
        axe_check(page)
    assert "img: Element does not have an alt attribute" in str(light.value)
    # Found in the page's own scheme; in the other, only the colour rules run (AXE_COLOUR_OPTIONS).
    assert "(light, 1280px wide)" in str(light.value) and "(dark," not in str(light.value)
    page.reload()
    page.evaluate(DARK_ONLY_CONTRAST_FAILURE)
    with pytest.raises(pytest.fail.Exception, match=r"color-contrast") as dark:
        axe_check(page)
    assert "(dark, 1280px wide)" in str(dark.value) and "(light," not in str(dark.value)
    assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") is False  # put back


@DEVICES
def test_a_visitors_pages(swept, scene, device):
    page = swept(device)
    for path in (
        "/",
        "/ladders/chess/",
        "/ladders/chess/?q=nobody",
        "/ladders/chess/players/alice/",
        "/players/alice/",
        scene["confirmed"].get_absolute_url(),
        scene["disputed"].get_absolute_url(),
        scene["pending"].get_absolute_url(),
        "/ladders/widelands/",
        "/accounts/login/",
        "/accounts/password-reset/",
        "/accounts/signup/",
    ):
        visit(page, path)

    page.get_by_role("button", name="Sign up").click()  # empty: every field says what is missing
    expect(page.get_by_text("This field is required.").first).to_be_visible()
    axe_check(page)
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_be_visible()
    axe_check(page)
    assert page.goto("/ladders/no-such-ladder/").status == 404
    axe_check(page)
    no_violations(page)


@DEVICES
def test_a_players_pages(swept, scene, device, ladder, player, opponent):
    page = swept(device)
    log_in(page, "alice")
    for path in ("/", "/ladders/chess/", "/ladders/chess/queue/", "/ladders/matches/awaiting/"):
        visit(page, path)

    page.goto(scene["pending"].get_absolute_url())
    page.get_by_text("Dispute…").first.click()  # the dispute form opens
    expect(page.get_by_label("What is wrong?")).to_be_visible()
    axe_check(page)

    page.goto("/ladders/chess/report/")
    page.get_by_role("button", name="Report 1 v 1").click()  # nothing filled in
    expect(page.get_by_role("alert").first).to_be_visible()
    axe_check(page)
    page.goto("/ladders/widelands/")
    page.get_by_role("button", name="Join this ladder").click()  # a message on top of the page
    expect(page.get_by_text("Welcome to Widelands Teams!")).to_be_visible()
    axe_check(page)
    page.goto("/ladders/widelands/report/")
    for _ in range(2):  # the second is refused: one open report about bob at a time
        page.goto(f"/ladders/chess/players/bob/report/?match={scene['pending'].pk}")
        page.get_by_label("Abuse").check()
        page.get_by_label("What happened").fill("Insults in the chat after the game.")
        with page.expect_navigation():  # sent, or refused: a page either way, checked once it is there
            page.get_by_role("button", name="Send the report").click()
        axe_check(page)
    expect(page.get_by_role("alert").first).to_contain_text("You already have an open report about bob")

    queue_states(page, ladder, player, opponent)
    for path in (
        "/ladders/chess/players/alice/",
        "/players/alice/",
        "/notifications/",
        "/notifications/settings/",
        "/accounts/settings/",
        "/accounts/settings/delete/",
        "/accounts/password/",
    ):
        visit(page, path)
    page.goto("/accounts/tokens/")
    page.get_by_label("Name").fill("my bot")
    page.get_by_role("button", name="Create token").click()
    expect(page.locator("#new-token")).to_be_visible()
    axe_check(page)
    no_violations(page)


def queue_states(page, ladder, player, opponent) -> None:
    """The ladder page's queue panel: searching, matched, the paired match, left, expired."""
    queue_join(ladder=ladder, player=player)
    page.goto("/ladders/chess/")
    expect(page.get_by_text("Searching for an opponent")).to_be_visible()
    queue_join(ladder=ladder, player=opponent)
    page.reload()
    expect(page.get_by_text("Matched against")).to_be_visible()
    axe_check(page)  # the ready check
    page.get_by_role("button", name="Ready").click()
    expect(page.get_by_text("You are ready")).to_be_visible()
    match = QueueEntry.objects.get(player=opponent, status=EntryStatus.MATCHED).match
    lifecycle.ready(match=match, user=opponent)
    expect(page.get_by_text("Both ready: play")).to_be_visible(timeout=10_000)
    page.get_by_role("link", name="Go to the match").click()
    expect(page.get_by_role("heading", name="How did it go?")).to_be_visible()
    axe_check(page)
    page.go_back()
    expect(page.get_by_text("One game at a time")).to_be_visible()
    match_report_result(match=match, reporter=opponent, placements=[1, 2])
    page.get_by_role("button", name="Find a match").click(timeout=10_000)  # the panel's watch shows it
    expect(page.get_by_text("Searching for an opponent")).to_be_visible()
    page.get_by_role("button", name="Cancel").click()
    expect(page.get_by_text("You left the queue.")).to_be_visible()
    axe_check(page)
    QueueEntry.objects.filter(player=player, status=EntryStatus.LEFT).update(status=EntryStatus.EXPIRED)
    page.reload()
    expect(page.get_by_text("Nobody was available")).to_be_visible()


@DEVICES
@pytest.mark.usefixtures("moderator_anywhere")
def test_a_moderators_pages(swept, scene, device, ladder, player, opponent):
    file_report(ladder=ladder, player=opponent, reporter=player, reason="abuse", text="Insults.", now=timezone.now())
    page = swept(device)
    log_in(page, "mod")
    for path in (
        "/",
        "/ladders/chess/",
        "/ladders/matches/awaiting/",
        scene["disputed"].get_absolute_url(),
        scene["pending"].get_absolute_url(),
        "/players/mod/",
        "/moderation/",
        "/moderation/audit/",
        "/ladders/chess/players/bob/reports/",
    ):
        visit(page, path)
    page.get_by_label("Nothing to act on").check()
    page.get_by_label("Note for the moderators").fill("Friendly banter between club mates.")
    page.get_by_role("button", name="Close the reports").click()
    expect(page.get_by_text("Decided: 1 report about bob closed")).to_be_visible()
    axe_check(page)
    no_violations(page)
