"""The tournament pages: the list, a tournament's page, entering, checking in, withdrawing, organising."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import LadderFactory, member
from tournaments import services
from tournaments.models import Board, EntryStatus, Format, Status, Tournament

pytestmark = pytest.mark.django_db


@pytest.fixture
def cup(moderator):
    ladder = LadderFactory(slug="chess", name="Chess", ready_window_seconds=0)
    now = timezone.now()
    return services.tournament_create(
        ladder=ladder,
        by=moderator,
        name="Winter cup",
        slug="winter-cup",
        format=Format.SINGLE_ELIMINATION,
        registration_closes_at=now + timedelta(hours=2),
        starts_at=now + timedelta(hours=2),
        check_in_minutes=180,
    )


def test_the_ladder_lists_its_tournaments_by_state(client, cup):
    page = client.get("/ladders/chess/tournaments/").content.decode()
    assert "Winter cup" in page and cup.get_absolute_url() in page
    assert "No tournament is being played." in page
    assert 'href="/ladders/chess/tournaments/"' in client.get("/ladders/chess/").content.decode()


def test_a_player_enters_checks_in_and_withdraws_from_the_page(client, cup):
    player = member(cup.ladder, "ann")
    client.force_login(player)
    url = cup.get_absolute_url()
    assert "Enter" in client.get(url).content.decode()

    response = client.post(f"{url}register/", follow=True)
    assert "You are entered in Winter cup." in response.content.decode()
    response = client.post(f"{url}check-in/", follow=True)
    assert "You are checked in" in response.content.decode()
    assert cup.entries.get().status == EntryStatus.CHECKED_IN
    response = client.post(f"{url}withdraw/", follow=True)
    assert "Your entry is withdrawn" in response.content.decode()
    assert cup.entries.get().status == EntryStatus.WITHDRAWN


def test_refusals_are_messages_not_errors(client, cup):
    outsider = member(LadderFactory(slug="go"), "bea")
    client.force_login(outsider)
    response = client.post(f"{cup.get_absolute_url()}register/", follow=True)
    assert response.status_code == 200
    assert "bea is not a member of this ladder" in response.content.decode()
    response = client.post(f"{cup.get_absolute_url()}organise/", {"action": "start"}, follow=True)
    assert "Only moderators organise tournaments." in response.content.decode()
    response = client.post(f"{cup.get_absolute_url()}organise/", {"action": "decide", "board": "x"}, follow=True)
    assert response.status_code == 200 and "Only moderators organise tournaments." in response.content.decode()
    # Acting on one's own entry without one: the same message from each, nothing changed.
    for action, data in (("check-in/", {}), ("withdraw/", {}), ("bye/", {"round": "1"}), ("bye/cancel/", {})):
        response = client.post(f"{cup.get_absolute_url()}{action}", data, follow=True)
        assert response.status_code == 200 and services.NOT_YOURS in response.content.decode(), action
    assert not cup.entries.exists()


def test_an_organiser_starts_and_the_page_draws_the_bracket(client, cup, moderator):
    for name in ("ann", "bob", "cy"):
        player = member(cup.ladder, name)
        services.entry_register(tournament=cup, captain=player)
        services.entry_check_in(entry=cup.entries.get(captain=player), player=player)
    client.force_login(moderator)

    response = client.post(f"{cup.get_absolute_url()}organise/", {"action": "start"}, follow=True)

    page = response.content.decode()
    assert "The tournament has started" in page
    assert Tournament.objects.get(pk=cup.pk).status == Status.RUNNING
    assert "<svg" in page and 'aria-label="Bracket' in page
    assert Board.objects.filter(tournament=cup).exclude(match=None).count() == 1  # three entries: the top seed waits
    live = client.get(f"{cup.get_absolute_url()}live/").content.decode()
    assert 'data-hx-trigger="every 10s"' in live


def test_every_page_answers_for_an_unknown_tournament_with_a_404(client, cup):
    assert client.get("/ladders/chess/tournaments/nope/").status_code == 404
    assert client.get("/ladders/nope/tournaments/").status_code == 404


def test_a_moderator_deciding_an_unknown_game_gets_a_404_not_an_error(client, cup, moderator):
    client.force_login(moderator)
    assert client.post(f"{cup.get_absolute_url()}organise/", {"action": "decide", "board": "x"}).status_code == 404
    assert client.post(f"{cup.get_absolute_url()}organise/", {"action": "repair", "reason": "r"}).status_code == 404
