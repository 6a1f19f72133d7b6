"""Two players in two browsers: one reports a win, the other confirms, both see the ratings move."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.membership import ladder_join
from ladder.models import Match
from ratings.models import PlayerRating, RatingChange
from tests.browser.conftest import DESKTOP, PHONE
from tests.factories import PASSWORD, LadderFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def no_horizontal_scroll(page) -> bool:
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .filter(e => !e.closest('.table-wrap'))
        .map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 5)"""
    )
    assert not wide, wide
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name=username, exact=True)).to_be_visible()


def history(ladder, player, opponent) -> None:
    """A few confirmed games over the last days, so the chart has a shape."""
    start = timezone.now() - timedelta(days=6)
    for day, player_won in enumerate([True, True, False, True, False]):
        winner, loser = (player, opponent) if player_won else (opponent, player)
        match = svc.match_report(
            ladder=ladder,
            reporter=winner,
            sides=[SideInput([winner], 1), SideInput([loser], 2)],
            played_at=start + timedelta(days=day, hours=day * 3),
        )
        svc.match_confirm(match=match, user=loser)


@pytest.mark.parametrize(("device", "name"), [(PHONE, "phone"), (DESKTOP, "desktop")])
@pytest.mark.ladder(name="Chess Club", slug="chess-club", allow_draws=False)
def test_report_confirm_and_see_the_new_ratings(new_page, screenshot, device, name, ladder, player, opponent):
    joined = timezone.now() - timedelta(days=30)
    for other in (UserFactory(username="carol"), UserFactory(username="dave_the_bot", is_bot=True)):
        ladder_join(ladder=ladder, player=other, now=joined)
    PlayerRating.objects.filter(player__username="carol").update(
        rating=1720, rd=62, rd_as_of=timezone.now(), games=14, wins=10, losses=4, last_played_at=timezone.now()
    )
    PlayerRating.objects.filter(player__username="dave_the_bot").update(
        rating=1650, rd=48, rd_as_of=timezone.now(), games=40, wins=22, losses=18, last_played_at=timezone.now()
    )
    history(ladder, player, opponent)

    one = new_page(device)
    log_in(one, "alice")
    one.goto("/ladders/chess-club/")
    expect(one.get_by_role("heading", name="Leaderboard")).to_be_visible()
    screenshot(one, f"leaderboard-{name}")
    assert no_horizontal_scroll(one)
    one.get_by_placeholder("Search players").fill("car")  # htmx swaps the table as you type
    expect(one.locator("#leaderboard-panel").get_by_role("link", name="dave_the_bot")).to_have_count(0)
    expect(one.locator("#leaderboard-panel").get_by_role("link", name="carol")).to_be_visible()
    expect(one).to_have_url("/ladders/chess-club/?q=car&bots=")
    one.get_by_role("link", name="Report a result").click()
    one.get_by_label("Opponent").fill("bob")
    one.get_by_text("I won").click()
    screenshot(one, f"report-{name}")
    assert no_horizontal_scroll(one)
    one.get_by_role("button", name="Report 1 v 1").click()
    expect(one.get_by_text("Reported. bob has 24 hours to confirm.")).to_be_visible()
    expect(one.get_by_text("Awaiting confirmation").first).to_be_visible()
    screenshot(one, f"match-pending-{name}")

    two = new_page(device)
    log_in(two, "bob")
    two.get_by_role("navigation", name="Main").get_by_role("link", name="To confirm").click()
    expect(two.get_by_role("heading", name="To confirm")).to_be_visible()
    expect(two.get_by_text("reported by alice")).to_be_visible()
    screenshot(two, f"awaiting-{name}")
    assert no_horizontal_scroll(two)
    two.get_by_role("button", name="Confirm", exact=True).click()
    expect(two.get_by_text("Confirmed and rated.")).to_be_visible()
    expect(two.get_by_role("button", name="Confirm", exact=True)).to_have_count(0)
    screenshot(two, f"awaiting-confirmed-{name}")

    two.get_by_role("link", name="View match").click()
    match = Match.objects.latest("pk")
    changes = {change.player.username: change for change in RatingChange.objects.filter(match=match)}
    expect(two.get_by_text(f"+{changes['alice'].delta:.0f}", exact=True)).to_be_visible()
    expect(two.get_by_text(f"−{-changes['bob'].delta:.0f}", exact=True)).to_be_visible()
    expect(two.get_by_text(f"{changes['alice'].rating_after:.0f}", exact=False).first).to_be_visible()
    screenshot(two, f"match-confirmed-{name}")
    assert no_horizontal_scroll(two)

    two.locator(".sides").get_by_role("link", name="alice").click()
    expect(two.get_by_role("heading", name="Rating history")).to_be_visible()
    chart = two.locator("svg.chart-narrow" if device is PHONE else "svg.chart-wide")
    expect(chart).to_be_visible()
    expect(chart.locator("circle.point")).to_have_count(7)  # the rating joined with, then six games
    screenshot(two, f"player-{name}")
    assert no_horizontal_scroll(two)
    two.emulate_media(color_scheme="dark")
    screenshot(two, f"player-dark-{name}")


def test_team_report_adds_a_side_with_htmx(new_page, screenshot):
    ladder = LadderFactory(
        name="Widelands Teams", slug="widelands", allow_teams=True, allow_uneven_teams=True, allow_free_for_all=True
    )
    names = ["ann", "ben", "cat", "dan", "eve"]
    for username in names:
        ladder_join(ladder=ladder, player=UserFactory(username=username))
    page = new_page(PHONE)
    log_in(page, "ann")
    page.goto("/ladders/widelands/report/")

    expect(page.locator("fieldset.side-row")).to_have_count(4)
    page.get_by_role("link", name="+ Add side").click()
    expect(page.get_by_text("Side 5", exact=True)).to_be_visible()
    for index, username in enumerate(names):
        page.locator(f"#id_sides-{index}-players").fill(username)
    page.locator("#id_sides-1-placement").fill("1")
    page.locator("#id_sides-0-placement").fill("2")
    screenshot(page, "report-sides-phone")
    assert no_horizontal_scroll(page)
    page.get_by_role("button", name="Report game").click()

    expect(page.get_by_text("Reported. The other sides have 24 hours to confirm.")).to_be_visible()
    expect(page.locator(".side")).to_have_count(5)
    screenshot(page, "match-ffa-phone")
