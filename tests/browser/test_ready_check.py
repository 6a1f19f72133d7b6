"""A paired match in two real browsers: a missed ready check, and a no-show claim conceded."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.models import Match, MatchStatus
from matchmaking import lifecycle
from matchmaking import services as queue
from tests.browser.conftest import DESKTOP, PHONE, axe_check
from tests.browser.test_queue import log_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.ladder(name="Blitz", slug="blitz", rematch_cooldown_minutes=0, ready_window_seconds=6)
def test_a_missed_ready_check_requeues_the_ready_player_and_warns_the_other(
    new_page, screenshot, ladder, player, opponent
):
    ready_page, absent_page = new_page(PHONE), new_page(DESKTOP)
    for page, name in ((ready_page, "alice"), (absent_page, "bob")):
        log_in(page, name)
        page.goto(ladder.get_absolute_url())
    ready_page.get_by_role("button", name="Find a match").click()
    expect(ready_page.get_by_text("Searching for an opponent")).to_be_visible()
    absent_page.get_by_role("button", name="Find a match").click()

    expect(ready_page.get_by_role("button", name="Ready")).to_be_visible(timeout=10_000)
    expect(ready_page.locator("#queue-status")).to_contain_text("Ready check")
    axe_check(ready_page)
    ready_page.get_by_role("button", name="Ready").click()
    expect(ready_page.get_by_text("You are ready. Waiting for bob")).to_be_visible()
    expect(absent_page.locator("#queue-status")).to_contain_text("alice")
    screenshot(absent_page, "ready-check-desktop")

    # The 6-second window, then the next poll of each page; a loaded machine stretches both.
    expect(ready_page.get_by_text("did not press Ready in time")).to_be_visible(timeout=30_000)
    expect(ready_page.get_by_text("Searching for an opponent")).to_be_visible()
    expect(absent_page.get_by_text("You did not press Ready in time")).to_be_visible(timeout=30_000)
    expect(absent_page.get_by_text("This time it is a warning")).to_be_visible()
    axe_check(ready_page)
    axe_check(absent_page)
    screenshot(ready_page, "ready-check-requeued-phone")
    assert Match.objects.get().status == MatchStatus.CANCELLED


@pytest.mark.ladder(name="Blitz", slug="blitz", rematch_cooldown_minutes=0)
def test_a_no_show_claim_conceded_is_a_forfeit(new_page, screenshot, ladder, player, opponent):
    queue.queue_join(ladder=ladder, player=player)
    match = Match.objects.get(pk=queue.queue_join(ladder=ladder, player=opponent).match_id)
    for user in (player, opponent):
        lifecycle.ready(match=match, user=user, now=timezone.now())
    claimant, claimed = new_page(DESKTOP), new_page(PHONE)
    log_in(claimant, "alice")
    log_in(claimed, "bob")

    claimant.goto(match.get_absolute_url())
    expect(claimant.get_by_role("heading", name="How did it go?")).to_be_visible()
    claimant.get_by_text("My opponent did not play").click()
    claimant.get_by_role("button", name="Claim a no-show").click()
    expect(claimant.get_by_text("Claim sent.")).to_be_visible()
    axe_check(claimant)

    claimed.goto(match.get_absolute_url())
    expect(claimed.get_by_text("says you did not play this game")).to_be_visible()
    axe_check(claimed)
    screenshot(claimed, "no-show-claimed-phone")
    claimed.get_by_role("button", name="I did not play: concede").click()
    expect(claimed.get_by_text("You conceded")).to_be_visible()

    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.confirmation == "forfeit"
    claimant.reload()
    expect(claimant.locator(".sides")).to_contain_text("Won")
    axe_check(claimant)
