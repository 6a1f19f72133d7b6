"""A tournament game past its round's deadline waits on the moderation desk until it is decided."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.factories import LadderFactory, member
from tournaments import services
from tournaments.models import Board, Round

pytestmark = pytest.mark.django_db
DESK = reverse("moderation")


@pytest.fixture
def running(moderator):
    """A Swiss of two in round 1: one game, its match scheduled."""
    ladder = LadderFactory(slug="chess", name="Chess", ready_window_seconds=0)
    now = timezone.now()
    tournament = services.tournament_create(
        ladder=ladder,
        by=moderator,
        name="Night cup",
        slug="night-cup",
        rounds=1,
        check_in_minutes=0,
        registration_closes_at=now + timedelta(hours=1),
        starts_at=now + timedelta(hours=1),
    )
    for name in ("ann", "bob"):
        services.entry_register(tournament=tournament, captain=member(ladder, name))
    return services.tournament_start(tournament=tournament, by=moderator)


def overdue(client) -> list:
    desk = client.get(DESK).context["desk"]
    return next(desk_list for desk_list in desk.lists if desk_list.key == "tournaments").rows


def test_a_game_past_its_deadline_is_on_the_desk_until_decided(moderator_client, moderator, running):
    board = Board.objects.get(tournament=running)
    assert overdue(moderator_client) == []  # within its deadline: the players have time

    Round.objects.filter(tournament=running).update(deadline=timezone.now() - timedelta(minutes=5))

    rows = overdue(moderator_client)
    assert [row.match.pk for row in rows] == [board.match_id]
    page = moderator_client.get(DESK).text
    assert "Night cup, round 1, board 1: no result by the round's deadline" in page
    decide = f"/ladders/chess/tournaments/night-cup/?decide={board.pk}#organise"
    assert f'<a class="button" href="{decide}">Decide</a>' in page
    form = moderator_client.get(decide).text
    assert '<option value="decide" selected>' in form and f'<option value="{board.pk}" selected>' in form

    services.board_decide(board=board, by=moderator, result=1.0, reason="bob never came")

    assert overdue(moderator_client) == []


def test_a_cancelled_tournaments_games_leave_the_desk(moderator_client, moderator, running):
    Round.objects.filter(tournament=running).update(deadline=timezone.now() - timedelta(minutes=5))
    assert len(overdue(moderator_client)) == 1

    services.tournament_cancel(tournament=running, by=moderator, reason="the server moved")

    assert overdue(moderator_client) == []


def test_the_desk_list_costs_the_same_queries_for_one_game_or_many(
    moderator_client, moderator, running, django_assert_num_queries, django_assert_max_num_queries
):
    Round.objects.filter(tournament=running).update(deadline=timezone.now() - timedelta(minutes=5))
    moderator_client.get(DESK)  # sessions and permissions cached as on every later page
    with django_assert_max_num_queries(50) as one:
        moderator_client.get(DESK)
    queries = len(one)  # now: the next request clears the log it reads
    ladder = running.ladder
    # A second tournament with two games, overdue too.
    other = services.tournament_create(
        ladder=ladder,
        by=moderator,
        name="Day cup",
        slug="day-cup",
        rounds=1,
        check_in_minutes=0,
        registration_closes_at=timezone.now() + timedelta(hours=1),
        starts_at=timezone.now() + timedelta(hours=1),
    )
    for name in ("gil", "hal", "ian", "jo"):
        services.entry_register(tournament=other, captain=member(ladder, name))
    services.tournament_start(tournament=other, by=moderator)
    Round.objects.update(deadline=timezone.now() - timedelta(minutes=5))
    assert len(overdue(moderator_client)) == 3

    with django_assert_num_queries(queries):
        moderator_client.get(DESK)
