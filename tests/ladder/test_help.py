"""The help page's glossary, and the links to it from every page that uses its words."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from ratings.models import PlayerRating

pytestmark = pytest.mark.django_db

# Issue 15's list of words a new player meets without an explanation, by anchor.
TERMS = {
    "rating": "Rating",
    "rd": "RD (rating deviation)",
    "gxe": "GXE",
    "tr": "TR",
    "conservative": "Conservative rating",
    "provisional": "Provisional",
    "ranked": "Ranked",
    "why-not-ranked": "Why not ranked",
    "luck-p": "Luck P",
    "team-update": "Team update",
    "trueskill": "TrueSkill",
    "win-probability": "Win probability",
    "queue-window": "The queue's window",
    "confirmation-window": "Confirmation window",
    "dispute": "Dispute",
    "report-a-player": "Reporting a player",
    "refund": "Refund",
    "marks": "Marks",
}


def help_links(html: str) -> set[str]:
    """The anchors of the help page that ``html`` links to."""
    return set(re.findall(r'href="/help/#([a-z-]+)"', html))


def settle(rating: PlayerRating, **fields) -> None:
    """Make ``rating`` ranked under the default rules: RD 60, 5 games, one today."""
    now = timezone.now()
    values = {"rd": 60.0, "games": 5, "wins": 5, "last_played_at": now, "rd_as_of": now, **fields}
    PlayerRating.objects.filter(pk=rating.pk).update(**values)


def test_help_page_defines_every_term_at_its_anchor(client):
    response = client.get("/help/")

    assert response.status_code == 200
    assert reverse("help") == "/help/"
    html = response.text
    for anchor, term in TERMS.items():
        assert re.search(rf'<dt id="{anchor}">{re.escape(term)}', html), f"no #{anchor} term"
        assert f'href="#{anchor}"' in html, f"the index does not link #{anchor}"
    rd = html.split('id="rd"', 1)[1].split("</dd>", 1)[0]
    assert "grows again while you do not play" in rd  # Timed Glicko's idle growth


def test_footer_links_to_help(client):
    response = client.get(reverse("home"))

    assert '<a href="/help/">Help</a>' in response.text


def test_ladder_page_links_its_terms_to_the_glossary(client, ladder, player, opponent):
    settle(player.ratings.get(ladder=ladder))  # alice is ranked, bob is not: both tables show
    client.force_login(player)

    html = client.get(ladder.get_absolute_url()).text

    leaderboard = html.split('id="leaderboard"', 1)[1].split('id="movers"', 1)[0].split('id="about"', 1)[0]
    header = leaderboard.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert {"gxe", "rating", "rd"} <= help_links(header)
    assert '<a class="term" href="/help/#rd"><abbr title="rating deviation">RD</abbr></a>' in header
    assert "why-not-ranked" in help_links(leaderboard.split("<thead>", 2)[2])
    settings = html.split('id="settings"', 1)[1]
    assert {"rd", "luck-p", "ranked", "confirmation-window", "gxe", "queue-window", "win-probability"} <= help_links(
        settings
    )


@pytest.mark.ladder(leaderboard_scale="tr")
def test_ladder_page_links_the_scale_it_sorts_by(client, ladder, player):
    settle(player.ratings.get(ladder=ladder))

    html = client.get(ladder.get_absolute_url()).text

    header = html.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert {"tr", "gxe"} <= help_links(header)


def test_player_and_profile_pages_link_their_terms(client, ladder, player):
    in_ladder = client.get(reverse("ladder:player", args=[ladder.slug, player.username])).text
    profile = client.get(player.get_absolute_url()).text

    assert {"rating", "rd", "gxe", "tr", "conservative", "why-not-ranked"} <= help_links(in_ladder)
    assert {"rating", "rd", "gxe", "tr", "conservative", "ranked"} <= help_links(profile)
