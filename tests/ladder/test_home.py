"""The home page of a signed-in player: their ladders with rank and rating, what waits for them, their games."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.matches import reporting as match_services
from ladder.matches.checks import SideInput
from ladder.membership import ladder_join
from ratings.models import PlayerRating
from tests.factories import LadderFactory, UserFactory

pytestmark = pytest.mark.django_db


def settle(player, ladder) -> None:
    """Make ``player`` rankable in ``ladder`` under the default rules: 5 games, one today."""
    now = timezone.now()
    PlayerRating.objects.filter(player=player, ladder=ladder).update(
        games=5, wins=5, rd=60.0, last_played_at=now, rd_as_of=now
    )


def play(ladder, reporter, winner, loser, hours_ago=0):
    played_at = timezone.now() - timedelta(hours=hours_ago)
    sides = [SideInput([winner], 1), SideInput([loser], 2)]
    return match_services.match_report(ladder=ladder, reporter=reporter, sides=sides, played_at=played_at)


def test_anonymous_home_is_the_welcome(client, ladder):
    response = client.get(reverse("home"))

    assert "Find an opponent your strength" in response.text
    assert "Your ladders" not in response.text


def test_home_shows_the_players_ladders_with_rank_and_rating(player_client, player, opponent, ladder):
    settle(player, ladder)
    settle(opponent, ladder)
    PlayerRating.objects.filter(player=player, ladder=ladder).update(rating=1700.0)
    ladder_join(ladder=LadderFactory(name="Go", slug="go"), player=player)

    html = player_client.get(reverse("home")).text

    assert "Welcome back, alice" in html
    assert "Your ladders" in html
    assert "<strong>#1</strong>" in html  # Chess: alice above bob
    assert "not ranked yet" in html  # Go: just joined
    assert 'href="/ladders/go/"' in html
    assert "Find an opponent your strength" not in html


def test_home_shows_results_waiting_for_the_player(player_client, player, opponent, ladder):
    play(ladder, opponent, opponent, player)

    html = player_client.get(reverse("home")).text

    assert "Waiting for you" in html
    assert "1 result reported by others waits for your answer." in html
    assert f'href="{reverse("ladder:awaiting")}"' in html


def test_home_shows_no_waiting_box_when_nothing_waits(player_client, player, opponent, ladder):
    play(ladder, player, player, opponent)  # alice's own report waits for bob, not for her

    html = player_client.get(reverse("home")).text

    assert "Waiting for you" not in html


def test_home_shows_the_five_most_recent_games(player_client, player, opponent, ladder):
    matches = [play(ladder, player, player, opponent, hours_ago=7 - n) for n in range(7)]

    response = player_client.get(reverse("home"))

    games = response.context["mine"].matches
    assert [game.summary.match.pk for game in games] == [m.pk for m in reversed(matches)][:5]
    assert games[0].outcome == "Won"
    assert [user.username for user in games[0].opponents] == ["bob"]
    assert "Won vs bob" in response.text


def test_home_queries_do_not_grow_with_ladders_or_matches(client, django_assert_max_num_queries):
    alice = UserFactory(username="alice")
    rivals = [UserFactory(username=f"rival{n}") for n in range(3)]
    for n in range(10):
        ladder = LadderFactory(name=f"Ladder {n}", slug=f"ladder-{n}")
        ladder_join(ladder=ladder, player=alice)
        for rival in rivals:
            ladder_join(ladder=ladder, player=rival)
            play(ladder, alice, alice, rival)
    client.force_login(alice)

    # Session, account, the ladder list, the memberships, one ranking per shown ladder (at
    # most HOME_LADDERS = 6), the header's counts, and the recent matches with their details (the
    # match fields' values among them).
    with django_assert_max_num_queries(15):
        response = client.get(reverse("home"))

    assert response.status_code == 200
    assert response.context["mine"].more_ladders
    assert len(response.context["mine"].matches) == 5
