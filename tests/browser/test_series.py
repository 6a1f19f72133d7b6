"""A best-of-3 series on its match page, game by game, on a phone (axe runs on every page)."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.models import Match, MatchStatus
from matchmaking import lifecycle
from matchmaking import services as queue
from tests.browser.conftest import PHONE, axe_check
from tests.browser.test_queue import log_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.ladder(name="Blitz", slug="blitz", rematch_cooldown_minutes=0, best_of=3)
def test_a_series_is_reported_game_by_game(new_page, screenshot, ladder, player, opponent):
    queue.queue_join(ladder=ladder, player=player)
    match = Match.objects.get(pk=queue.queue_join(ladder=ladder, player=opponent).match_id)
    for user in (player, opponent):
        lifecycle.ready(match=match, user=user, now=timezone.now())
    page = new_page(PHONE)
    log_in(page, "alice")

    page.goto(match.get_absolute_url())
    expect(page.locator("#series-score")).to_contain_text("Best of 3")
    axe_check(page)
    page.get_by_role("button", name="I won game 1").click()
    expect(page.locator("#series-score")).to_contain_text("game 2 next")
    page.get_by_role("button", name="I won game 2").click()
    # Decided: the result awaits bob's answer, and the games it stands on stay in view.
    expect(page.get_by_role("heading", name="Series")).to_be_visible()
    expect(page.get_by_role("list", name="Games so far")).to_contain_text("Game 2: alice won")

    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING
    assert sorted(match.sides.values_list("placement", flat=True)) == [1, 2]
    screenshot(page, "series-decided-phone")
    axe_check(page)
