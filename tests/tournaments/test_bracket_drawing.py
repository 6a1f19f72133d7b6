"""The bracket drawn in SVG (tournaments.reads.bracket): its boxes, the lines between them, and
elimination standings that show places, wins and losses rather than Swiss tie-breaks."""

from __future__ import annotations

import re

import pytest

from tests.factories import LadderFactory
from tests.tournaments.test_lifecycle import field, make, play_round
from tournaments import reads, services
from tournaments.models import Format, Tournament
from tournaments.reads import BOX_HEIGHT, BOX_WIDTH, SLOT_Y

pytestmark = pytest.mark.django_db
BOX = re.compile(r'<g id="bracket-([A-Z0-9-]+)" transform="translate\((\d+) (\d+)\)">')
LINK = re.compile(r'<path class="bracket-link( elsewhere)?" d="M(\d+) (\d+)H(\d+)V(\d+)H(\d+)">')


@pytest.fixture
def quick_ladder():
    return LadderFactory(slug="chess", ready_window_seconds=0)


def started(ladder, moderator, format: str, count: int) -> Tournament:
    tournament = make(ladder, moderator, format=format)
    for player in field(ladder, count):
        services.entry_register(tournament=tournament, captain=player)
    return services.tournament_start(tournament=tournament)


def drawn(tournament: Tournament) -> dict[str, str]:
    bracket = reads.bracket(tournament, list(tournament.entries.all()))
    assert bracket is not None
    return {title: str(svg) for title, svg in bracket.sections}


def boxes(svg: str) -> dict[str, tuple[int, int]]:
    return {key: (int(x), int(y)) for key, x, y in BOX.findall(svg)}


def links(svg: str) -> list[tuple[bool, int, int, int, int]]:
    """Each link as (dashed, x1, y1, x2, y2)."""
    return [(bool(dashed), int(x1), int(y1), int(x2), int(y2)) for dashed, x1, y1, _, y2, x2 in LINK.findall(svg)]


def test_each_game_is_joined_to_the_side_of_the_game_its_winner_goes_to(quick_ladder, moderator):
    svg = drawn(started(quick_ladder, moderator, Format.SINGLE_ELIMINATION, 5))["Bracket"]
    at = boxes(svg)

    assert sorted(at) == ["W1-1", "W1-2", "W1-3", "W1-4", "W2-1", "W2-2", "W3-1"]
    expected = []
    for game, (a, b) in {"W2-1": ("W1-1", "W1-2"), "W2-2": ("W1-3", "W1-4"), "W3-1": ("W2-1", "W2-2")}.items():
        x, y = at[game]
        for source, slot in ((a, SLOT_Y[0]), (b, SLOT_Y[1])):
            sx, sy = at[source]
            expected.append((False, sx + BOX_WIDTH, sy + BOX_HEIGHT // 2, x, y + slot))
    assert sorted(links(svg)) == sorted(expected)
    # Each game lies between the two it comes from, so its lines meet it from above and below.
    for game, (a, b) in {"W2-1": ("W1-1", "W1-2"), "W3-1": ("W2-1", "W2-2")}.items():
        assert at[a][1] < at[game][1] < at[b][1]


def test_double_elimination_shows_where_each_loser_drops_and_the_reset(quick_ladder, moderator):
    tournament = started(quick_ladder, moderator, Format.DOUBLE_ELIMINATION, 4)
    play_round(tournament)  # the favourites win W1: seeds 4 and 3 drop to L1
    tournament = services.tournament_advance(tournament=tournament)

    sections = drawn(tournament)

    winners, losers, final = sections["Winners' bracket"], sections["Losers' bracket"], sections["Grand final"]
    assert "<title>W1-1: p0 against p3; its loser goes to L1-1</title>" in winners
    # L1 pairs the losers of W1, now known; L2 waits for the loser of W2-1, linked to that game.
    assert '<text class="bracket-name" x="8" y="16">p3</text>' in losers
    assert (
        '<a href="#bracket-W2-1"><text class="bracket-name bracket-source" x="8" y="38">loser of W2-1</text></a>'
        in (losers)
    )
    stubs = [link for link in links(losers) if link[0]]
    assert len(stubs) == 3  # L1-1's two sides and L2-1's side b come from the winners' bracket
    assert all(y1 == y2 and x2 - x1 == reads.LEFT for _, x1, y1, x2, y2 in stubs)
    solid = [link for link in links(losers) if not link[0]]
    l1, l2 = boxes(losers)["L1-1"], boxes(losers)["L2-1"]
    assert solid == [(False, l1[0] + BOX_WIDTH, l1[1] + BOX_HEIGHT // 2, l2[0], l2[1] + SLOT_Y[0])]
    assert "winner of W2-1" in final and "winner of L2-1" in final
    gf1, gf2 = boxes(final)["GF1"], boxes(final)["GF2"]
    reset = (True, gf1[0] + BOX_WIDTH, gf1[1] + BOX_HEIGHT // 2, gf2[0], gf2[1] + BOX_HEIGHT // 2)
    assert reset in links(final)
    assert "played only if the losers&#x27; champion wins GF1" in final


def test_a_bye_and_the_loser_of_a_game_against_one_read_bye(quick_ladder, moderator):
    sections = drawn(started(quick_ladder, moderator, Format.DOUBLE_ELIMINATION, 3))  # seed 1 has a bye in W1-1
    bye = '<text class="bracket-name bracket-source" x="8" y="{}">bye</text>'

    assert bye.format(38) in sections["Winners' bracket"].split("W1-2")[0]
    losers = sections["Losers' bracket"]
    assert "loser of W1-1" not in losers and bye.format(16) in losers
    assert (
        '<a href="#bracket-W1-2"><text class="bracket-name bracket-source" x="8" y="38">loser of W1-2</text></a>'
        in (losers)
    )
    assert len([link for link in links(losers) if link[0]]) == 2  # no stub where nobody comes


def test_elimination_standings_show_places_wins_and_losses_not_tiebreaks(client, quick_ladder, moderator):
    tournament = started(quick_ladder, moderator, Format.SINGLE_ELIMINATION, 4)
    play_round(tournament)  # p0 beats p3, p1 beats p2

    page = client.get(f"{tournament.get_absolute_url()}live/").content.decode()

    head = re.search(r'<h2 id="standings">.*?</thead>', page, re.S)
    assert head is not None
    assert ">Place</th>" in head.group() and ">Won</th>" in head.group() and ">Lost</th>" in head.group()
    assert "Buchholz" not in head.group() and "Points" not in head.group()
    rows = re.findall(
        r"<tr[^>]*>\s*<td class=\"num\">(\d+|<span class=\"badge\">still in</span>)</td>\s*<td>(p\d)[^<]*</td>\s*"
        r"<td class=\"num\">(\d+)</td>\s*<td class=\"num\">(\d+)</td>",
        page,
    )
    still_in = '<span class="badge">still in</span>'
    # The finalists have no place yet: they are listed first, by losses, wins and seed.
    assert rows == [
        (still_in, "p0", "1", "0"),
        (still_in, "p1", "1", "0"),
        ("3", "p2", "0", "1"),
        ("3", "p3", "0", "1"),
    ]

    play_round(services.tournament_advance(tournament=tournament))  # p0 beats p1 in the final
    services.tournament_advance(tournament=tournament)
    page = client.get(tournament.get_absolute_url()).content.decode()
    assert "still in" not in page and "Final standings" in page
    assert re.search(r'<td class="num">1</td>\s*<td>p0', page) and re.search(r'<td class="num">2</td>\s*<td>p1', page)
