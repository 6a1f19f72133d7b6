from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from ladder.membership import ladder_join
from ratings.models import PlayerRating
from tests.factories import LadderFactory, UserFactory

pytestmark = pytest.mark.django_db


def settle(membership: PlayerRating, **fields) -> None:
    """Make ``membership`` rankable under the default rules: 5 games, one today, plus ``fields``."""
    values = {"games": 5, "wins": 5, "last_played_at": timezone.now(), "rd_as_of": timezone.now(), **fields}
    PlayerRating.objects.filter(pk=membership.pk).update(**values)


def crowd(ladder, count: int, *, prefix: str = "p", bots: bool = False, **fields) -> list[PlayerRating]:
    """``count`` members at once (no password hashing), each settled and rated 2000 down by one."""
    users = User.objects.bulk_create(User(username=f"{prefix}{n:03d}", password="!", is_bot=bots) for n in range(count))
    now = timezone.now()
    values = {"rd": 60.0, "games": 5, "wins": 5, "last_played_at": now, **fields}
    return PlayerRating.objects.bulk_create(
        PlayerRating(
            ladder=ladder,
            player=user,
            rating=2000.0 - n,
            volatility=0.06,
            rd_as_of=now,
            joined_at=now,
            **values,
        )
        for n, user in enumerate(users)
    )


def test_home_lists_ladders_with_player_counts(client, django_assert_max_num_queries):
    chess = LadderFactory(name="Chess Club")
    LadderFactory(name="Hidden", is_listed=False)
    for n in range(3):
        ladder_join(ladder=chess, player=UserFactory(username=f"member{n}"))

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


@pytest.mark.django_db
def test_a_trueskill_ladder_page_names_its_engine_and_settings(client):
    ladder = LadderFactory(engine="trueskill", trueskill_beta=150.0, trueskill_tau=5.0, rd_growth_per_day=2.5)

    response = client.get(ladder.get_absolute_url())

    assert response.status_code == 200
    assert "<dd>TrueSkill</dd>" in response.text
    assert 'href="/help/#trueskill"' in response.text
    assert "150 / 5, idle growth 2.5 a day" in response.text


def test_ladder_page_separates_ranked_from_provisional(player_client, player, opponent, ladder):
    settle(PlayerRating.objects.get(ladder=ladder, player=opponent), rating=1600, rd=60)

    response = player_client.get(ladder.get_absolute_url())

    board = response.context["leaderboard"]
    assert [row.rating.player.username for row in board.ranked] == ["bob"]
    assert board.ranked[0].rank == 1
    assert [row.rating.player.username for row in board.provisional] == ["alice"]
    assert "Your standing" in response.text
    assert "Leave this ladder…" in response.text


def test_unknown_ladder_is_a_404_page(client):
    response = client.get(reverse("ladder:detail", args=["nope"]))

    assert response.status_code == 404
    assert "Page not found" in response.text


def test_leaderboard_sorts_by_the_ladders_display_scale(client):
    ladder = LadderFactory(leaderboard_scale="conservative")
    bold = ladder_join(ladder=ladder, player=UserFactory(username="bold"))
    steady = ladder_join(ladder=ladder, player=UserFactory(username="steady"))
    settle(bold, rating=1600, rd=95)
    settle(steady, rating=1590, rd=40)

    board = client.get(ladder.get_absolute_url()).context["leaderboard"]

    assert [row.rating.player.username for row in board.ranked] == ["steady", "bold"]
    assert [row.score for row in board.ranked] == [pytest.approx(1510), pytest.approx(1410)]

    ladder.leaderboard_scale = "gxe"
    ladder.save()
    board = client.get(ladder.get_absolute_url()).context["leaderboard"]
    assert [row.rating.player.username for row in board.ranked] == ["bold", "steady"]


def test_leaderboard_says_why_each_player_is_not_ranked(client):
    ladder = LadderFactory(ranked_min_games=5, ranked_max_idle_days=30)
    now = timezone.now()
    for name, fields in {
        "ranked": {},
        "shaky": {"rd": 143},
        "fresh": {"games": 3, "wins": 3},
        "away": {"last_played_at": now - timedelta(days=41), "rd": 50, "rd_as_of": now},
    }.items():
        settle(ladder_join(ladder=ladder, player=UserFactory(username=name)), rd=fields.pop("rd", 60), **fields)

    response = client.get(ladder.get_absolute_url())

    board = response.context["leaderboard"]
    assert [row.rating.player.username for row in board.ranked] == ["ranked"]
    reasons = {row.rating.player.username: row.reason for row in board.provisional}
    assert reasons == {"shaky": "RD 143 > 100", "fresh": "3 of 5 games", "away": "last game 41 days ago"}
    assert "Why not ranked" in response.text
    assert "3 of 5 games" in response.text
    assert "RD ≤ 100, 5+ games, a game in 30 days" in response.text


def test_idle_rule_can_be_switched_off(client):
    ladder = LadderFactory(ranked_max_idle_days=0, rd_growth_per_day=0)
    away = ladder_join(ladder=ladder, player=UserFactory(username="away"))
    settle(away, rd=60, last_played_at=timezone.now() - timedelta(days=400))

    board = client.get(ladder.get_absolute_url()).context["leaderboard"]

    assert [row.rating.player.username for row in board.ranked] == ["away"]


def test_leaderboard_paginates_ranked_then_unranked_with_global_ranks(client, django_assert_max_num_queries):
    ladder = LadderFactory()
    crowd(ladder, 60)
    crowd(ladder, 3, prefix="new", games=0, wins=0, rd=350.0)

    # One more than the leaderboard's own: the ladder's seasons, read once and then kept in the cache.
    with django_assert_max_num_queries(5):
        first = client.get(ladder.get_absolute_url())
    second = client.get(ladder.get_absolute_url(), {"page": 2})

    board = first.context["leaderboard"]
    assert len(board.ranked) == 50 and board.provisional == []
    assert (board.ranked[0].rank, board.ranked[-1].rank) == (1, 50)
    assert board.ranked_count == 60 and board.unranked_count == 3
    assert "Page 1 of 2" in first.text and "?page=2" in first.text
    board = second.context["leaderboard"]
    assert [row.rank for row in board.ranked] == list(range(51, 61))
    assert [row.rating.player.username for row in board.provisional] == ["new000", "new001", "new002"]


def test_leaderboard_query_count_does_not_grow_with_players(player_client, ladder, django_assert_max_num_queries):
    crowd(ladder, 5)
    # Two for the queue panel, one for the latest snapshot, one for the header's counts, one
    # ranking statement for the member's own rank in *Your standing*.
    with django_assert_max_num_queries(11) as few:
        player_client.get(ladder.get_absolute_url())
    crowd(ladder, 40, prefix="more")
    with django_assert_max_num_queries(len(few.captured_queries)):
        player_client.get(ladder.get_absolute_url())


def test_leaderboard_search_keeps_the_real_rank(client):
    ladder = LadderFactory()
    crowd(ladder, 12)

    board = client.get(ladder.get_absolute_url(), {"q": "P01"}).context["leaderboard"]

    assert [(row.rank, row.rating.player.username) for row in board.ranked] == [
        (11, "p010"),
        (12, "p011"),
    ]


def test_leaderboard_search_without_a_match_says_so(client):
    ladder = LadderFactory()
    crowd(ladder, 2)

    response = client.get(ladder.get_absolute_url(), {"q": "zed"})

    assert "No players match “zed”" in response.text


def test_leaderboard_marks_and_filters_bots(client):
    ladder = LadderFactory()
    crowd(ladder, 2, prefix="human")
    crowd(ladder, 2, prefix="robot", bots=True)

    everyone = client.get(ladder.get_absolute_url())
    hidden = client.get(ladder.get_absolute_url(), {"bots": "hide"}).context["leaderboard"]
    only = client.get(ladder.get_absolute_url(), {"bots": "only"}).context["leaderboard"]
    junk = client.get(ladder.get_absolute_url(), {"bots": "junk"}).context["leaderboard"]

    assert everyone.text.count('<span class="badge">bot</span>') == 2
    assert [row.rating.player.username for row in hidden.ranked] == ["human000", "human001"]
    assert [row.rating.player.username for row in only.ranked] == ["robot000", "robot001"]
    assert len(junk.ranked) == 4 and junk.bots == ""


def test_leaderboard_htmx_request_gets_only_the_panel(client):
    ladder = LadderFactory()
    crowd(ladder, 3)

    response = client.get(
        ladder.get_absolute_url(), {"q": "p001"}, headers={"HX-Request": "true", "HX-Target": "leaderboard-panel"}
    )

    assert response.text.lstrip().startswith('<div id="leaderboard-panel">')
    assert "p001" in response.text and "p002" not in response.text
    assert "<html" not in response.text


def test_hidden_provisional_players_are_left_out(client):
    ladder = LadderFactory(show_provisional=False)
    crowd(ladder, 1)
    crowd(ladder, 1, prefix="new", games=0, wins=0)

    board = client.get(ladder.get_absolute_url()).context["leaderboard"]

    assert board.provisional == [] and board.unranked_count == 1 and len(board.ranked) == 1


def test_leaderboard_rows_link_to_the_player_pages(client, ladder):
    crowd(ladder, 1)

    response = client.get(ladder.get_absolute_url())

    assert 'href="/ladders/chess/players/p000/"' in response.text
