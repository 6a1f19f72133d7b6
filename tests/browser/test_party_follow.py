"""A party member's page follows the party without a reload (docs/rules.md §13, one game at a
time): the invitation arrives, the leader sees it accepted, the leader's search shows as the
member's, the game formed shows on the member's panel, and nobody can search a second game."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ladder.models import Match
from matchmaking import lifecycle
from matchmaking.services import queue_join
from tests.browser.conftest import DESKTOP, PHONE, axe_check
from tests.browser.test_queue import log_in
from tests.factories import member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The party box watches every 5 s and an idle panel in a party every 3 s.
WATCH = 12_000


@pytest.mark.ladder(
    name="Widelands", slug="widelands", allow_teams=True, queue_formats="2v2", rematch_cooldown_minutes=0
)
def test_a_party_members_page_follows_the_leader_without_a_reload(new_page, ladder, player, opponent):
    carol, dave = member(ladder, "carol"), member(ladder, "dave")
    leader, mate = new_page(DESKTOP), new_page(PHONE)
    log_in(leader, "alice")
    log_in(mate, "bob")
    for page in (leader, mate):
        page.goto(ladder.get_absolute_url())

    leader.get_by_label("Invite a player by username").fill("bob")
    leader.get_by_role("button", name="Invite").click()
    expect(mate.locator("#party-box")).to_contain_text("alice invites you to their party", timeout=WATCH)
    mate.get_by_role("button", name="Accept").click()
    expect(leader.locator("#party-box")).not_to_contain_text("invited", timeout=WATCH)
    expect(leader.locator("#party-box")).to_contain_text("bob")

    leader.get_by_role("button", name="Find a match").click()
    expect(mate.locator("#queue-panel")).to_contain_text("Searching for a game", timeout=WATCH)
    expect(mate.locator("#queue-panel")).to_contain_text("party of 2")
    axe_check(mate)

    queue_join(ladder=ladder, player=carol, formats_wanted=["2v2"])
    queue_join(ladder=ladder, player=dave, formats_wanted=["2v2"])
    for page in (leader, mate):
        expect(page.locator("#queue-panel")).to_contain_text("game is formed", timeout=WATCH)
    mate.get_by_role("button", name="Ready").click()
    leader.get_by_role("button", name="Ready").click()
    match = Match.objects.get(ladder=ladder)
    for user in (carol, dave):
        lifecycle.ready(match=match, user=user)
    expect(mate.locator("#queue-panel")).to_contain_text("play your game", timeout=WATCH)
    expect(mate.get_by_role("button", name="Find a match")).to_have_count(0)
    expect(mate.get_by_role("button", name="Search again")).to_have_count(0)
    expect(mate.locator("#queue-panel")).to_contain_text("One game at a time")
    axe_check(mate)
