"""A 2 v 2 from the queue in four real browsers: formed, ready, reported, confirmed and rated."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ladder.models import Match, MatchStatus
from ratings.models import RatingChange
from tests.browser.conftest import DESKTOP, PHONE, axe_check
from tests.browser.test_queue import log_in
from tests.factories import member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAMES = ("alice", "bob", "carol", "dave")
# A panel polls every 2 s; a game forms on a join, so the others see it within a poll or two.
POLL = 10_000


def search_two_v_two(page) -> None:
    """Tick 2 v 2 if the join form offers formats, then search."""
    box = page.get_by_role("checkbox", name="2 v 2")
    if box.count():
        box.check()
    page.get_by_role("button", name="Find a match").click()


def teams_shown(page, me: str) -> list[list[str]]:
    """The formed teams as this player's panel lists them, each player by name ("You" is ``me``)."""
    teams = page.locator("#queue-panel .queue-team")
    names = [teams.nth(i).locator(".queue-team-players li").all_inner_texts() for i in range(teams.count())]
    # Each line is "<Ready|Not yet> <name>": the name is its last word.
    return [sorted(me if line.split()[-1] == "You" else line.split()[-1] for line in team) for team in names]


@pytest.mark.ladder(
    name="Widelands",
    slug="widelands",
    allow_teams=True,
    queue_formats="2v2",
    rematch_cooldown_minutes=0,
)
def test_four_players_form_a_two_v_two_ready_report_and_confirm(new_page, ladder, player, opponent):
    for name in NAMES[2:]:  # carol and dave join the cast's alice and bob
        member(ladder, name)
    pages = {name: new_page(PHONE if name == "alice" else DESKTOP) for name in NAMES}
    for name, page in pages.items():
        log_in(page, name)
        page.goto(ladder.get_absolute_url())
    for page in pages.values():
        search_two_v_two(page)

    for page in pages.values():
        expect(page.locator("#queue-panel")).to_contain_text("game is formed", timeout=POLL)
        expect(page.locator("#queue-panel .queue-team")).to_have_count(2)
        expect(page.locator("#queue-panel .queue-chance")).to_have_count(2)
        expect(page.locator("#queue-panel .queue-chance").first).to_contain_text("% to win")
    shown = {name: teams_shown(page, name) for name, page in pages.items()}
    split = sorted(shown["alice"])
    assert all(sorted(teams) == split for teams in shown.values()), shown
    assert sorted(name for team in split for name in team) == sorted(NAMES) and [len(team) for team in split] == [2, 2]
    axe_check(pages["alice"])  # the formed panel on a phone
    axe_check(pages["bob"])  # and on a desktop

    for page in pages.values():
        page.locator("#queue-panel").get_by_role("button", name="Ready").click()
    for page in pages.values():
        expect(page.locator("#queue-panel")).to_contain_text("Everyone is ready", timeout=POLL)
        expect(page.get_by_role("link", name="Go to the match")).to_be_visible()

    match = Match.objects.get()
    assert match.status == MatchStatus.SCHEDULED
    alice_team = next(team for team in split if "alice" in team)
    rival = next(name for name in NAMES if name not in alice_team)
    reporter = pages["alice"]
    reporter.get_by_role("link", name="Go to the match").click()
    expect(reporter.get_by_role("heading", name="How did it go?")).to_be_visible()
    axe_check(reporter)  # the match page on a phone
    reporter.get_by_role("button", name="We won").click()  # a team reports as a team
    expect(reporter.get_by_text("Result reported.")).to_be_visible()

    confirmer = pages[rival]
    confirmer.goto(match.get_absolute_url())
    expect(confirmer.get_by_role("heading", name="Is this right?")).to_be_visible()
    axe_check(confirmer)  # the match page on a desktop
    confirmer.get_by_role("button", name="Confirm").click()
    expect(confirmer.locator("h1 .badge")).to_have_text("Confirmed")
    sides = confirmer.locator(".sides")
    expect(sides.locator(".delta")).to_have_count(4)
    expect(sides.locator(".predicted")).to_have_count(2)  # each team's chance, kept from the queue
    winners = sides.locator(".side", has=confirmer.get_by_role("link", name="alice", exact=True))
    expect(winners).to_contain_text("Won")
    axe_check(confirmer)

    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.rated_at is not None
    changes = RatingChange.objects.filter(match=match).select_related("player")
    assert sorted(change.player.username for change in changes) == sorted(NAMES)
    moved = {change.player.username: change.rating_after - change.rating_before for change in changes}
    assert all(moved[name] > 0 for name in alice_team), moved
    assert all(moved[name] < 0 for name in NAMES if name not in alice_team), moved
