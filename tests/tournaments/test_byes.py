"""Requested byes in a Swiss: an entry asks to sit a round out, or an organiser gives it that bye."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from tests.api.openapi import Recorded, Recorder
from tests.factories import LadderFactory, member
from tests.tournaments.test_lifecycle import field, make, play_round
from tournaments import services
from tournaments.models import Action, Board, BoardKind, Format, RequestedBye, Tournament
from tournaments.views import BYE_ASKED, BYE_CANCELLED

pytestmark = pytest.mark.django_db


@pytest.fixture
def quick_ladder():
    return LadderFactory(ready_window_seconds=0)


@pytest.fixture
def swiss(quick_ladder, moderator) -> Tournament:
    """Five entries, three rounds, a bye worth a win, a draw worth 1 (a win 3): round 1 to be paired."""
    tournament = make(quick_ladder, moderator, rounds=3, points_win=3, points_draw=1, points_bye=3)
    for player in field(quick_ladder, 5):
        services.entry_register(tournament=tournament, captain=player)
    return tournament


def entry(tournament: Tournament, name: str):
    return tournament.entries.get(name=name)


def test_an_organisers_bye_leaves_the_entry_out_of_its_round_for_a_draws_points(swiss, moderator):
    services.entry_bye(entry=entry(swiss, "p4"), round=2, by=moderator, reason="travelling")
    swiss = services.tournament_start(tournament=swiss, by=moderator)
    first = Board.objects.get(round__tournament=swiss, round__number=1, kind=BoardKind.BYE)
    # p4 is the lowest-ranked and would have had round 1's bye: it has one to come, so p3 gets it.
    assert first.a.name == "p3"

    play_round(swiss)
    swiss = services.tournament_advance(tournament=swiss)

    second = list(Board.objects.filter(round__tournament=swiss, round__number=2))
    sitting = [b for b in second if b.kind == BoardKind.REQUESTED]
    assert [b.a.name for b in sitting] == ["p4"] and sitting[0].result == 0.5 and sitting[0].match_id is None
    assert all(entry(swiss, "p4").pk not in (b.a_id, b.b_id) for b in second if b.kind != BoardKind.REQUESTED)
    assert sum(1 for b in second if b.kind == BoardKind.PLAYED) == 2  # four entries left: no pairing bye
    points = {row.id: row.points for row in services.standings_of(swiss)}
    assert points[entry(swiss, "p4").pk] == 0 + 1  # lost round 1 (3 v 0), a draw's point for the bye
    action = Action.objects.get(tournament=swiss, action="bye")
    assert action.entry.name == "p4" and action.reason == "round 2: travelling" and action.actor == moderator


def test_an_entry_asks_for_its_own_bye_and_the_round_is_paired_around_it(swiss, moderator):
    p0 = entry(swiss, "p0")
    services.entry_bye(entry=p0, round=1, by=p0.captain)
    services.tournament_start(tournament=swiss, by=moderator)

    kinds = sorted(b.kind for b in Board.objects.filter(round__tournament=swiss, round__number=1))
    assert kinds == ["played", "played", "requested"]
    assert not Action.objects.filter(tournament=swiss, action="bye").exists()  # the organisers' record only


def test_one_bye_per_entry_the_pairings_or_a_requested_one(swiss, moderator):
    services.entry_bye(entry=entry(swiss, "p1"), round=3, by=moderator, reason="exam")
    with pytest.raises(ValidationError) as twice:
        services.entry_bye(entry=entry(swiss, "p1"), round=2, by=moderator, reason="again")
    assert twice.value.code == "bye_taken"
    assert twice.value.messages == [services.BYE_TAKEN % {"name": "p1"}]

    swiss = services.tournament_start(tournament=swiss, by=moderator)
    had = Board.objects.get(round__tournament=swiss, kind=BoardKind.BYE).a
    with pytest.raises(ValidationError) as after_pairing_bye:
        services.entry_bye(entry=had, round=3, by=had.captain)
    assert after_pairing_bye.value.code == "bye_taken"


def test_a_bye_is_for_a_swiss_round_not_yet_paired(swiss, quick_ladder, moderator):
    swiss = services.tournament_start(tournament=swiss, by=moderator)
    p2 = entry(swiss, "p2")
    for round in (1, 4):
        with pytest.raises(ValidationError) as refused:
            services.entry_bye(entry=p2, round=round, by=p2.captain)
        assert refused.value.code == "bye_round"
        assert refused.value.messages == [services.BYE_ROUND % {"first": 2, "last": 3}]

    robin = make(quick_ladder, moderator, slug="robin", format=Format.ROUND_ROBIN)
    player = member(quick_ladder, "rr")
    robin_entry = services.entry_register(tournament=robin, captain=player)
    with pytest.raises(ValidationError) as not_swiss:
        services.entry_bye(entry=robin_entry, round=1, by=player)
    assert not_swiss.value.code == "not_swiss"


def test_only_the_entrys_players_ask_and_an_organiser_says_why(swiss, moderator):
    p0, p1 = entry(swiss, "p0"), entry(swiss, "p1")
    with pytest.raises(ValidationError) as other:
        services.entry_bye(entry=p0, round=2, by=p1.captain)
    assert other.value.code == "not_yours"
    with pytest.raises(ValidationError) as silent:
        services.entry_bye(entry=p0, round=2, by=moderator)
    assert silent.value.code == "reason_required"
    assert not RequestedBye.objects.exists()


def test_a_player_asks_for_a_bye_on_the_page_and_an_organiser_gives_one(client, swiss, moderator):
    url = swiss.get_absolute_url()
    p0 = entry(swiss, "p0")
    client.force_login(p0.captain)
    page = client.get(url).content.decode()
    assert 'action="/ladders/' in page and "Ask for a bye" in page

    response = client.post(f"{url}bye/", {"round": "2"}, follow=True)

    page = response.content.decode()
    assert BYE_ASKED % {"round": 2} in page
    assert "Byes asked for" in page and "round 2: p0" in page
    assert "Ask for a bye" not in page  # one bye an entry
    assert client.post(f"{url}bye/", {"round": "x"}, follow=True).status_code == 200  # refused, not a 500

    client.force_login(moderator)
    page = client.get(url).content.decode()
    assert '<option value="bye">Give an entry a bye</option>' in page
    response = client.post(
        f"{url}organise/",
        {"action": "bye", "entry": entry(swiss, "p1").pk, "round": "3", "reason": "exam"},
        follow=True,
    )
    assert "The entry has its bye." in response.content.decode()
    assert "round 3, p1 (exam)" in response.content.decode()
    assert client.post(f"{url}organise/", {"action": "bye", "entry": "x", "reason": "r"}).status_code == 404


def test_the_api_gives_a_bye_as_the_schema_says(swiss, moderator, client_for, api):
    recorder = Recorder(api.get("/api/v1/schema/").json())
    mod = Recorded(client_for(moderator), recorder)
    base = f"/api/v1/ladders/{swiss.ladder.slug}/tournaments/{swiss.slug}/"
    p3 = entry(swiss, "p3").pk

    given = mod.post(f"{base}actions/", {"action": "bye", "entry": p3, "round": 2, "reason": "exam"})
    assert given.status_code == 200
    assert given.json()["byes_to_come"] == [{"entry": "p3", "round": 2}]

    unsaid = mod.post(f"{base}actions/", {"action": "bye", "entry": p3, "reason": "exam"})
    assert unsaid.status_code == 400 and "round" in unsaid.json()["error"]["fields"]
    late = mod.post(f"{base}actions/", {"action": "bye", "entry": entry(swiss, "p2").pk, "round": 9, "reason": "r"})
    assert late.status_code == 400 and late.json()["error"]["code"] == "bye_round"
    assert "round" in late.json()["error"]["fields"]
    again = mod.post(f"{base}actions/", {"action": "bye", "entry": p3, "round": 3, "reason": "exam"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "bye_taken"
    assert "entry" in again.json()["error"]["fields"]
    assert mod.post(f"{base}actions/", {"action": "bye", "round": 3, "reason": "r"}).status_code == 404
    player = entry(swiss, "p0").captain
    assert Recorded(client_for(player), recorder).post(f"{base}actions/", {"action": "bye"}).status_code == 403


def test_a_bye_is_cancelled_before_its_round_and_the_entry_plays_it(swiss, moderator):
    p4 = entry(swiss, "p4")
    services.entry_bye(entry=p4, round=2, by=p4.captain)
    services.bye_cancel(entry=p4, by=p4.captain)
    assert not RequestedBye.objects.exists()
    services.entry_bye(entry=p4, round=1, by=moderator, reason="late train")
    with pytest.raises(ValidationError) as silent:
        services.bye_cancel(entry=p4, by=moderator)
    assert silent.value.code == "reason_required"
    services.bye_cancel(entry=p4, by=moderator, reason="the train was on time")
    assert Action.objects.get(tournament=swiss, action="unbye").reason == "round 1: the train was on time"

    services.entry_bye(entry=p4, round=1, by=p4.captain)
    swiss = services.tournament_start(tournament=swiss, by=moderator)
    with pytest.raises(ValidationError) as used:
        services.bye_cancel(entry=p4, by=p4.captain)  # round 1 is paired: the bye stands
    assert used.value.code == "no_bye"
    assert used.value.messages == [services.NO_BYE % {"name": "p4"}]
    assert Board.objects.get(round__tournament=swiss, kind=BoardKind.REQUESTED).a == p4


def test_a_player_cancels_the_bye_on_the_page_and_an_organiser_through_the_api(
    client, swiss, moderator, client_for, api
):
    url = swiss.get_absolute_url()
    p0 = entry(swiss, "p0")
    services.entry_bye(entry=p0, round=2, by=p0.captain)
    client.force_login(p0.captain)
    assert "Play round 2 after all" in client.get(url).content.decode()

    response = client.post(f"{url}bye/cancel/", follow=True)

    assert BYE_CANCELLED in response.content.decode() and not RequestedBye.objects.exists()
    again = client.post(f"{url}bye/cancel/", follow=True).content.decode()
    assert services.NO_BYE % {"name": "p0"} in again

    services.entry_bye(entry=p0, round=3, by=p0.captain)
    recorder = Recorder(api.get("/api/v1/schema/").json())
    mod = Recorded(client_for(moderator), recorder)
    actions = f"/api/v1/ladders/{swiss.ladder.slug}/tournaments/{swiss.slug}/actions/"
    cancelled = mod.post(actions, {"action": "cancel_bye", "entry": p0.pk, "reason": "asked by mail"})
    assert cancelled.status_code == 200 and cancelled.json()["byes_to_come"] == []
    none_left = mod.post(actions, {"action": "cancel_bye", "entry": p0.pk, "reason": "again"})
    assert none_left.status_code == 409 and none_left.json()["error"]["code"] == "no_bye"
