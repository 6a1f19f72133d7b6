"""A best-of-3 series on its match page, game by game, on a phone (axe runs on every page)."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.models import Match, MatchFieldValue, MatchStatus
from matchmaking import lifecycle
from matchmaking import services as queue
from tests.browser.conftest import DESKTOP, PHONE, axe_check
from tests.browser.test_queue import log_in
from tests.stats.test_aggregates import fields_of

pytestmark = pytest.mark.django_db(transaction=True)


def paired_and_ready(ladder, player, opponent) -> Match:
    """A match the queue paired, both players ready: its series is to be played."""
    queue.queue_join(ladder=ladder, player=player)
    match = Match.objects.get(pk=queue.queue_join(ladder=ladder, player=opponent).match_id)
    for user in (player, opponent):
        lifecycle.ready(match=match, user=user, now=timezone.now())
    return match


@pytest.mark.ladder(name="Blitz", slug="blitz", rematch_cooldown_minutes=0, best_of=3)
def test_a_series_is_reported_game_by_game(new_page, screenshot, ladder, player, opponent):
    match = paired_and_ready(ladder, player, opponent)
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


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
@pytest.mark.ladder(name="Widelands", slug="widelands", rematch_cooldown_minutes=0, best_of=3, rate_each_game=True)
def test_each_game_of_a_series_takes_its_map_and_tribes(new_page, screenshot, device, name, ladder, player, opponent):
    map_field, tribe_field, _ = fields_of(ladder)
    match = paired_and_ready(ladder, player, opponent)
    page = new_page(device)
    log_in(page, "alice")
    page.goto(match.get_absolute_url())

    page.get_by_label("Map").select_option("The Nile")
    page.get_by_label("Tribe (You)").select_option("Empire")
    page.get_by_label("Replay").fill("ftp://replays.example/1")  # refused: the page again, nothing recorded
    page.get_by_role("button", name="I won game 1").press("Enter")
    expect(page.get_by_text("Replay is a link starting with http://")).to_be_visible()
    assert not match.series_games.exists()
    screenshot(page, f"series-fields-refused-{name}")

    page.get_by_label("Replay").fill("")
    page.get_by_role("button", name="I won game 1").press("Enter")
    expect(page.locator("#series-score")).to_contain_text("game 2 next")
    game = match.series_games.get(number=1).game_match
    assert MatchFieldValue.objects.get(match=game, field=map_field).value == "The Nile"
    assert MatchFieldValue.objects.get(match=game, field=tribe_field, player=player).value == "Empire"
