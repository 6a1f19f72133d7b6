"""A whole Swiss tournament of nine players played through the pages in Chromium: entering and
checking in, the organiser's start, each round's pairings and its bye, a game of each round
reported and confirmed on its match page (the others through the services those pages call),
the next round paired on a reload, and the final standings."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from ladder.matches.reporting import match_confirm, match_report_result
from ladder.models import Match
from ratings.models import PlayerRating
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_matches import log_in
from tests.factories import member
from tournaments import services
from tournaments.models import Board, BoardKind, Status

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = ["ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal", "ivy"]  # strongest first
IN_THE_BROWSER = {"ann": PHONE, "ben": DESKTOP, "cat": DESKTOP}  # enter and check in on the page


def round_section(page, number: int):
    return page.get_by_role("region", name=f"Round {number}", exact=True)


def row_of(section, text: str):
    return section.get_by_role("row").filter(has_text=text)


@pytest.mark.ladder(name="Chess Club", slug="chess-club", ready_window_seconds=0)
def test_a_swiss_of_nine_is_played_through_the_pages(new_page, screenshot, live_server, ladder, moderator_anywhere):
    players = {name: member(ladder, name) for name in NAMES}
    for n, name in enumerate(NAMES):
        PlayerRating.objects.filter(ladder=ladder, player=players[name]).update(rating=1900 - 50 * n)
    now = timezone.now()
    cup = services.tournament_create(
        ladder=ladder,
        by=moderator_anywhere,
        name="Autumn Swiss",
        slug="autumn-swiss",
        rounds=3,
        check_in_minutes=120,  # check-in is open already: the start is in an hour
        registration_closes_at=now + timedelta(hours=1),
        starts_at=now + timedelta(hours=1),
    )
    url = cup.get_absolute_url()
    pages = {}

    def page_of(name: str):
        """A player's own browser, kept for the whole tournament. Those who enter on the page log
        in on its form; the others get a session cookie (quicker) and open the tournament."""
        if name not in pages:
            page = pages[name] = new_page(IN_THE_BROWSER.get(name, DESKTOP))
            if name in IN_THE_BROWSER:
                log_in(page, name)
            else:
                client = Client()
                client.force_login(players[name])
                session = client.cookies[settings.SESSION_COOKIE_NAME].value
                page.context.add_cookies(
                    [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
                )
                page.goto(url)
        return pages[name]

    for name in IN_THE_BROWSER:
        page = page_of(name)
        page.goto(url)
        page.get_by_role("button", name="Enter", exact=True).click()
        expect(page.get_by_text("You are entered in Autumn Swiss.")).to_be_visible()
        page.get_by_role("button", name="Check in").click()
        expect(page.get_by_text("You are checked in")).to_be_visible()
        expect(page.get_by_role("button", name="Check in")).to_have_count(0)
    for name in NAMES:
        if name not in IN_THE_BROWSER:
            entry = services.entry_register(tournament=cup, captain=players[name])
            services.entry_check_in(entry=entry, player=players[name])

    organiser = new_page(DESKTOP)
    log_in(organiser, "mod")
    organiser.goto(url)
    entries = organiser.get_by_role("region", name="Entries")
    expect(entries.get_by_role("listitem")).to_have_count(9)
    expect(entries.get_by_text("checked in")).to_have_count(9)
    screenshot(organiser, "tournament-registration-desktop")
    organiser.get_by_label("Action").select_option(label="Start now")
    organiser.get_by_role("button", name="Do it").click()
    expect(organiser.get_by_text("The tournament has started: round 1 is paired.")).to_be_visible()
    cup.refresh_from_db()
    assert cup.status == Status.RUNNING

    byes = []
    for number in (1, 2, 3):
        if number > 1:
            organiser.goto(url)  # the page pairs the next round as it is read
        expect(organiser.get_by_role("region", name="About")).to_contain_text(f"Running, round {number}")
        boards = list(
            Board.objects.filter(tournament=cup, round__number=number)
            .select_related("a__captain", "b__captain")
            .order_by("number")
        )
        games = [board for board in boards if board.b_id]
        (bye,) = [board for board in boards if board.kind == BoardKind.BYE]
        assert len(games) == 4
        byes.append(bye.a.name)
        shown = round_section(organiser, number)
        expect(row_of(shown, bye.a.name)).to_contain_text("bye")
        for board in games:
            expect(row_of(shown, f"{board.a.name} – {board.b.name}")).to_contain_text("to be played")
        if number == 2:
            screenshot(organiser, "tournament-running-desktop")
            phone = page_of("ann")
            phone.goto(url)
            link = round_section(phone, 2).get_by_role("link", name=f"Match #{games[0].match_id}")
            expect(link).to_be_visible()  # a player on a phone reaches the game from here, not scrolling sideways
            box = link.bounding_box()
            assert box is not None and box["x"] + box["width"] <= PHONE["viewport"]["width"]
            screenshot(phone, "tournament-running-phone")

        for index, board in enumerate(games):
            a, b = board.a.captain.username, board.b.captain.username
            upset = index == number % len(games)  # the favourite wins, but one game a round
            winner, loser = (b, a) if (NAMES.index(a) < NAMES.index(b)) == upset else (a, b)
            if index == 0:  # on the pages, reported by the winner in rounds 1 and 3, the loser in round 2
                reporter, confirmer = (winner, loser) if number % 2 else (loser, winner)
                play(
                    page_of(reporter),
                    page_of(confirmer),
                    url,
                    board,
                    outcome="I won" if reporter == winner else "I lost",
                )
            else:  # the services those pages call
                match = Match.objects.get(pk=board.match_id)
                a_won = winner == a
                match_report_result(match=match, reporter=players[loser], placements=[1, 2] if a_won else [2, 1])
                match_confirm(match=Match.objects.get(pk=match.pk), user=players[winner])

        organiser.goto(f"{url}?round={number}")
        done = round_section(organiser, number)
        expect(done).to_contain_text("finished")
        for board in games:
            board.refresh_from_db()
            expect(row_of(done, f"{board.a.name} – {board.b.name}")).to_contain_text(
                "1 – 0" if board.result == 1.0 else "0 – 1"
            )
    assert len(set(byes)) == 3  # nobody sits out twice

    organiser.goto(url)
    cup.refresh_from_db()
    assert cup.status == Status.FINISHED
    names = dict(cup.entries.values_list("pk", "name"))
    expected = [names[row.id] for row in services.standings_of(cup)]
    assert expected[0] == "ann"  # the favourite: the upsets fell elsewhere
    for page, device in ((organiser, "desktop"), (page_of("ann"), "phone")):
        if page is not organiser:
            page.goto(url)
        standings = page.get_by_role("region", name="Final standings")
        expect(standings.get_by_role("row")).to_have_count(10)  # the head and nine entries
        shown = [row.get_by_role("cell").nth(1).inner_text().strip() for row in standings.get_by_role("row").all()[1:]]
        assert shown == expected
        screenshot(page, f"tournament-finished-{device}")


def play(reporter, confirmer, url: str, board: Board, *, outcome: str) -> None:
    """The reporter finds the game on the tournament page and reports it on its match page; the
    other player follows "To confirm" to the same match page and confirms it there."""
    reporter.goto(url)
    reporter.get_by_role("link", name=f"Match #{board.match_id}", exact=True).click()
    expect(reporter.get_by_role("heading", name="How did it go?")).to_be_visible()
    reporter.get_by_role("button", name=outcome).click()
    expect(reporter.get_by_text("Result reported.")).to_be_visible()
    confirmer.get_by_role("navigation", name="Main").get_by_role("link", name="To confirm").click()
    card = confirmer.get_by_role("article").filter(has=confirmer.locator(f'a[href$="/matches/{board.match_id}/"]'))
    card.get_by_role("link", name="Chess Club").click()
    expect(confirmer.get_by_role("heading", name="Is this right?")).to_be_visible()
    confirmer.get_by_role("button", name="Confirm", exact=True).click()
    expect(confirmer.get_by_text("Confirmed and rated.")).to_be_visible()
