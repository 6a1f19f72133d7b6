from __future__ import annotations

import pytest
from django.urls import reverse

from ladder import services
from ratings.models import PlayerRating
from tests.factories import LadderFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_home_lists_ladders_with_player_counts(client, django_assert_max_num_queries):
    chess = LadderFactory(name="Chess Club")
    LadderFactory(name="Hidden", is_listed=False)
    for n in range(3):
        services.ladder_join(ladder=chess, player=UserFactory(username=f"member{n}"))

    with django_assert_max_num_queries(4):
        response = client.get(reverse("home"))

    assert response.status_code == 200
    ladders = list(response.context["ladders"])
    assert [ladder.name for ladder in ladders] == ["Chess Club"]
    assert ladders[0].player_count == 3
    assert ladders[0].active_this_week == 3
    assert "Last activity" in response.text


def test_home_empty_state(client):
    response = client.get(reverse("home"))

    assert "No ladders yet" in response.text


def test_ladder_page_shows_settings_and_friendly_empty_leaderboard(client, ladder):
    response = client.get(ladder.get_absolute_url())

    assert response.status_code == 200
    assert "No ranked players yet" in response.text
    assert "Timed Glicko (TGR)" in response.text
    assert "15%–85%" in response.text
    assert "Log in to join" in response.text


def test_ladder_page_separates_ranked_from_provisional(player_client, player, opponent, ladder):
    services.ladder_join(ladder=ladder, player=player)
    settled = services.ladder_join(ladder=ladder, player=opponent)
    PlayerRating.objects.filter(pk=settled.pk).update(rating=1600, rd=60)

    response = player_client.get(ladder.get_absolute_url())

    board = response.context["leaderboard"]
    assert [row.rating.player.username for row in board.ranked] == ["bob"]
    assert board.ranked[0].rank == 1
    assert [row.rating.player.username for row in board.provisional] == ["alice"]
    assert "Your standing" in response.text
    assert "Leave ladder" in response.text


def test_unknown_ladder_is_a_404_page(client):
    response = client.get(reverse("ladder:detail", args=["nope"]))

    assert response.status_code == 404
    assert "Page not found" in response.text


def test_leaderboard_sorts_by_the_ladders_display_scale(client):
    ladder = LadderFactory(leaderboard_scale="conservative")
    bold = services.ladder_join(ladder=ladder, player=UserFactory(username="bold"))
    steady = services.ladder_join(ladder=ladder, player=UserFactory(username="steady"))
    PlayerRating.objects.filter(pk=bold.pk).update(rating=1600, rd=95)
    PlayerRating.objects.filter(pk=steady.pk).update(rating=1590, rd=40)

    board = client.get(ladder.get_absolute_url()).context["leaderboard"]

    assert [row.rating.player.username for row in board.ranked] == ["steady", "bold"]
    assert [row.score for row in board.ranked] == [pytest.approx(1510), pytest.approx(1410)]

    ladder.leaderboard_scale = "gxe"
    ladder.save()
    board = client.get(ladder.get_absolute_url()).context["leaderboard"]
    assert [row.rating.player.username for row in board.ranked] == ["bold", "steady"]
