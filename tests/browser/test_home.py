"""A returning player's home page on a phone and a desktop: their ladders, what waits for them, their games."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.membership import ladder_join
from ratings.models import PlayerRating
from tests.browser.conftest import DESKTOP, PHONE
from tests.factories import PASSWORD, LadderFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)
LONG_NAME = "a_player_with_a_thirty_char_nm"  # the longest username there is


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def returning_player():
    """A player ranked in one ladder and new to another, with rated games and one result to answer."""
    chess = LadderFactory(name="Chess Club", slug="chess-club", leaderboard_scale="gxe")
    go = LadderFactory(name="Go, nine by nine", slug="go")
    server = UserFactory(username="gameserver", is_bot=True)
    chess.trusted_reporters.add(server)
    player = UserFactory(username=LONG_NAME)
    rivals = [UserFactory(username=name) for name in ("bob", "carol", "dave")]
    start = timezone.now() - timedelta(days=30)
    for user in [player, *rivals]:
        ladder_join(ladder=chess, player=user, now=start)
    ladder_join(ladder=go, player=player)
    for n, rival in enumerate(rivals * 2):
        winner, loser = (player, rival) if n % 3 else (rival, player)
        played = timezone.now() - timedelta(days=6 - n)
        sides = [SideInput([winner], 1), SideInput([loser], 2)]
        svc.match_report(ladder=chess, reporter=server, sides=sides, played_at=played)
    now = timezone.now()
    PlayerRating.objects.filter(ladder=chess).update(last_played_at=now, rd_as_of=now, rd=60.0)
    sides = [SideInput([rivals[0]], 1), SideInput([player], 2)]
    svc.match_report(ladder=chess, reporter=rivals[0], sides=sides, played_at=now - timedelta(hours=1))
    return player


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
def test_signed_in_home_shows_the_players_ladders_waiting_results_and_games(new_page, screenshot, device, name):
    returning_player()
    page = new_page(device)
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(LONG_NAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_role("heading", name=f"Welcome back, {LONG_NAME}")).to_be_visible()
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()
    ladders = page.get_by_role("region", name="Your ladders")
    expect(ladders.get_by_role("link", name="Chess Club")).to_be_visible()
    expect(ladders.get_by_text("not ranked yet")).to_be_visible()
    games = page.get_by_role("region", name="Your recent games").get_by_role("listitem")
    expect(games).to_have_count(5)
    assert no_horizontal_scroll(page)
    screenshot(page, f"home-signed-in-{name}")

    page.get_by_role("link", name="To confirm").last.click()
    expect(page.get_by_role("heading", name="To confirm")).to_be_visible()
