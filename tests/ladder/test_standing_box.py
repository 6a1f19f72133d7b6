"""*Your standing* on the ladder page gives the rank and the scale's value the home page
gives; GXE is defined once, the settings box's words being the glossary's."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.models import LeaderboardScale
from ratings.models import PlayerRating

pytestmark = pytest.mark.django_db


def standing_box(page: str) -> str:
    return page.split('id="standing"', 1)[1].split("</section>", 1)[0]


def home_figures(page: str) -> str:
    return re.sub(r"\s+", " ", page.split('class="home-figures"', 1)[1].split("</span>\n", 1)[0])


def test_standing_shows_the_rank_and_gxe_the_home_page_shows(player_client, player, opponent, ladder):
    now = timezone.now()
    PlayerRating.objects.filter(ladder=ladder, player=player).update(
        rating=1700, rd=60, games=5, wins=5, last_played_at=now, rd_as_of=now
    )

    box = standing_box(player_client.get(ladder.get_absolute_url()).text)
    home = player_client.get(reverse("home")).text

    gxe = re.search(r"GXE (\d+\.\d\d)%", home).group(1)
    assert "<strong>#1</strong>" in home and "<dd>#1</dd>" in box
    assert f"<dd>{gxe}%</dd>" in box and 'href="/help/#gxe">GXE</a>' in box


def test_an_unranked_member_reads_not_ranked_yet_in_the_standing(player_client, ladder):
    box = standing_box(player_client.get(ladder.get_absolute_url()).text)

    assert '<span class="badge warn">not ranked yet</span>' in box


def test_gxe_is_defined_once(client, ladder):
    help_page = client.get(reverse("help")).text
    definition = help_page.split('id="gxe"', 1)[1].split("<dd>", 1)[1]

    assert LeaderboardScale.GXE.label == "GLIXARE (chance to beat a new player, %)"
    assert definition.startswith("Your chance, in percent, of beating a brand-new player")
    assert "average player" not in client.get(ladder.get_absolute_url()).text
