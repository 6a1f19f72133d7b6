"""A paired match's life through the API: Ready, cancel by agreement, no-show claims (docs/rules.md §13)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.models import Match
from matchmaking.models import EntryStatus, QueueEntry, QueuePenalty
from matchmaking.services import queue_join, queue_leave
from tests.api.conftest import error_of
from tests.factories import member


def _pair(ladder, player, opponent) -> int:
    """alice and bob search and are paired; the match's id."""
    queue_join(ladder=ladder, player=player)
    queue_join(ladder=ladder, player=opponent)
    entry = QueueEntry.objects.get(ladder=ladder, player=player, status=EntryStatus.MATCHED)
    assert entry.match_id is not None
    return entry.match_id


def _url(match_id: int, action: str = "") -> str:
    return f"/api/v1/matches/{match_id}/{action}"


def _post(client, match_id: int, action: str, body: dict | None = None):
    return client.post(_url(match_id, action), body if body is not None else {}, format="json")


def _deadline_passed(match_id: int, field: str) -> None:
    Match.objects.filter(pk=match_id).update(**{field: timezone.now() - timedelta(seconds=1)})


@pytest.fixture
def clients(client_for, player, opponent):
    return client_for(player), client_for(opponent)


@pytest.fixture
def scheduled(ladder, player, opponent, clients) -> int:
    """A paired match both players pressed Ready for."""
    match_id = _pair(ladder, player, opponent)
    for client in clients:
        assert _post(client, match_id, "ready/").status_code == 200
    return match_id


def _side(body: dict, index: int) -> dict:
    return body["sides"][index]


def test_both_ready_schedule_the_match(ladder, player, opponent, clients):
    a, b = clients
    match_id = _pair(ladder, player, opponent)
    fresh = a.get(_url(match_id)).json()
    assert fresh["status"] == "ready_check" and fresh["ready_deadline"] and fresh["play_deadline"] is None
    assert [side["ready"] for side in fresh["sides"]] == [False, False]
    first = _post(a, match_id, "ready/")
    assert first.status_code == 200 and first.json()["status"] == "ready_check"
    assert sorted(side["ready"] for side in first.json()["sides"]) == [False, True]
    assert _post(a, match_id, "ready/").status_code == 200  # twice is harmless
    both = _post(b, match_id, "ready/")
    assert both.status_code == 200
    assert both.json()["status"] == "scheduled" and both.json()["play_deadline"]
    assert all(side["ready"] for side in both.json()["sides"])
    late = _post(b, match_id, "ready/")
    assert late.status_code == 409 and error_of(late)["code"] == "not_ready_check"


def test_a_missed_ready_check_cancels_the_match_and_the_ready_player_searches_again(ladder, player, opponent, clients):
    a, b = clients
    match_id = _pair(ladder, player, opponent)
    _post(a, match_id, "ready/")
    _deadline_passed(match_id, "ready_deadline")
    shown = a.get(_url(match_id)).json()  # no sweep ran: the read settles it
    assert shown["status"] == "cancelled" and shown["cancel_reason"] == "ready_missed" and shown["cancelled_at"]
    polled = a.get(f"/api/v1/ladders/{ladder.slug}/queue/").json()
    assert polled["status"] == "waiting" and polled["match_status"] is None
    late = _post(b, match_id, "ready/")
    assert late.status_code == 409 and error_of(late)["code"] == "not_ready_check"


def test_a_late_ready_ends_the_check_and_is_refused(ladder, player, opponent, clients):
    a, _ = clients
    match_id = _pair(ladder, player, opponent)
    _deadline_passed(match_id, "ready_deadline")
    late = _post(a, match_id, "ready/")
    assert late.status_code == 409 and error_of(late)["code"] == "not_ready_check"
    assert Match.objects.get(pk=match_id).status == "cancelled"


def test_the_queue_poll_tells_the_ready_check(ladder, player, opponent, clients):
    a, _ = clients
    url = f"/api/v1/ladders/{ladder.slug}/queue/"
    match_id = _pair(ladder, player, opponent)
    polled = a.get(url).json()
    assert polled["status"] == "matched" and polled["match"] == match_id
    assert polled["match_status"] == "ready_check" and polled["ready"] is False and polled["ready_deadline"]
    _post(a, match_id, "ready/")
    assert a.get(url).json()["ready"] is True


def test_the_queue_poll_of_a_scheduled_match_has_no_ready_check(ladder, scheduled, clients):
    polled = clients[0].get(f"/api/v1/ladders/{ladder.slug}/queue/").json()
    assert polled["match_status"] == "scheduled"
    assert polled["ready"] is None and polled["ready_deadline"] is None


def test_a_search_during_the_missed_ready_ban_is_429_with_retry_after(ladder, player, opponent, clients, client_for):
    a, b = clients
    first = _pair(ladder, player, opponent)
    _miss(first, ready=b, reader=a)  # a warning; bob, who was ready, searches again
    QueueEntry.objects.filter(player=player).exclude(status=EntryStatus.MATCHED).update(rejoin_after=None)
    QueuePenalty.objects.filter(player=player).update(banned_until=None)  # the warning's short hold is over
    queue_leave(ladder=ladder, player=opponent)
    carol = member(ladder, "carol")
    queue_join(ladder=ladder, player=carol)
    second = queue_join(ladder=ladder, player=player)
    assert second.status == EntryStatus.MATCHED and second.match_id is not None
    _miss(second.match_id, ready=client_for(carol), reader=a)  # the ladder's first cooldown
    refused = a.post(f"/api/v1/ladders/{ladder.slug}/queue/", {}, format="json")
    assert refused.status_code == 429 and error_of(refused)["code"] == "queue_cooldown"
    assert 0 < int(refused["Retry-After"]) <= ladder.missed_ready_first_minutes * 60


def _miss(match_id: int, *, ready, reader) -> None:
    """Only ``ready``'s player presses Ready; the check runs out and ``reader``'s read settles it."""
    assert _post(ready, match_id, "ready/").status_code == 200
    _deadline_passed(match_id, "ready_deadline")
    assert reader.get(_url(match_id)).json()["status"] == "cancelled"


def test_cancel_by_agreement(scheduled, clients):
    a, b = clients
    asked = _post(a, scheduled, "cancel/")
    assert asked.status_code == 200 and asked.json()["status"] == "scheduled"
    assert sorted(side["cancel_requested"] for side in asked.json()["sides"]) == [False, True]
    agreed = _post(b, scheduled, "cancel/").json()
    assert agreed["status"] == "cancelled" and agreed["cancel_reason"] == "agreed" and agreed["cancelled_at"]
    assert agreed["rated"] is False
    again = _post(a, scheduled, "cancel/")
    assert again.status_code == 409 and error_of(again)["code"] == "not_open"


def test_a_no_show_claim_answered_played_goes_to_the_moderators(scheduled, clients):
    a, b = clients
    claimed = _post(a, scheduled, "no-show/")
    assert claimed.status_code == 200
    body = claimed.json()
    assert body["status"] == "claimed" and body["claim_deadline"]
    assert sorted(side["no_show_claimed"] for side in body["sides"]) == [False, True]
    for client in (a, b):
        again = _post(client, scheduled, "no-show/")
        assert again.status_code == 409 and error_of(again)["code"] == "already_claimed"
    own = _post(a, scheduled, "no-show/answer/", {"played": False})
    assert own.status_code == 409 and error_of(own)["code"] == "own_claim"
    no_reason = _post(b, scheduled, "no-show/answer/", {"played": True, "reason": "   "})
    assert no_reason.status_code == 400
    assert error_of(no_reason)["code"] == "reason_required" and "reason" in error_of(no_reason)["fields"]
    answered = _post(b, scheduled, "no-show/answer/", {"played": True, "reason": "We played; I won."})
    assert answered.status_code == 200 and answered.json()["status"] == "disputed"
    assert answered.json()["claim_deadline"] is None
    after = _post(b, scheduled, "no-show/answer/", {"played": False})
    assert after.status_code == 409 and error_of(after)["code"] == "no_claim"


def test_a_conceded_no_show_is_a_rated_forfeit(scheduled, clients):
    a, b = clients
    _post(a, scheduled, "no-show/")
    conceded = _post(b, scheduled, "no-show/answer/", {"played": False})
    assert conceded.status_code == 200
    body = conceded.json()
    assert body["status"] == "confirmed" and body["confirmation"] == "forfeit" and body["rated"] is True
    claimer = next(side for side in body["sides"] if side["no_show_claimed"])
    assert claimer["placement"] == 1


@pytest.mark.ladder(forfeits_rated=False)
def test_a_conceded_no_show_in_a_ladder_without_rated_forfeits_is_cancelled(scheduled, clients):
    a, b = clients
    _post(a, scheduled, "no-show/")
    body = _post(b, scheduled, "no-show/answer/", {"played": False}).json()
    assert body["status"] == "cancelled" and body["cancel_reason"] == "forfeit" and body["rated"] is False


def test_an_unanswered_claim_shows_as_a_forfeit_once_its_deadline_passed(scheduled, clients, api):
    _post(clients[0], scheduled, "no-show/")
    _deadline_passed(scheduled, "claim_deadline")
    assert api.get(_url(scheduled)).json()["status"] == "confirmed"


def test_refusals_have_the_api_error_shape(ladder, player, opponent, clients, client_for, outsider, api):
    a, _ = clients
    match_id = _pair(ladder, player, opponent)
    stranger = _post(client_for(outsider), match_id, "ready/")
    assert stranger.status_code == 403 and error_of(stranger)["code"] == "not_participant"
    for action in ("ready/", "cancel/", "no-show/", "no-show/answer/"):
        missing = _post(a, 999_999, action, {"played": False})
        assert missing.status_code == 404 and error_of(missing)["code"] == "not_found", action
        assert _post(api, match_id, action).status_code == 401, action
    early = _post(a, match_id, "no-show/")
    assert early.status_code == 409 and error_of(early)["code"] == "not_scheduled"
    no_claim = _post(a, match_id, "no-show/answer/", {"played": False})
    assert no_claim.status_code == 409 and error_of(no_claim)["code"] == "no_claim"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"surprise": 1}, "surprise"),
        ({}, "played"),
        ({"played": "perhaps"}, "played"),
        ({"played": True}, "reason"),
        ({"played": True, "reason": "x" * 2001}, "reason"),
    ],
)
def test_a_bad_answer_is_a_400_naming_the_field(scheduled, clients, body, field):
    a, _ = clients
    _post(a, scheduled, "no-show/")
    response = _post(clients[1], scheduled, "no-show/answer/", body)
    assert response.status_code == 400 and field in error_of(response)["fields"], response.json()


def test_ready_takes_no_body_fields(ladder, player, opponent, clients):
    match_id = _pair(ladder, player, opponent)
    response = _post(clients[0], match_id, "ready/", {"now": "later"})
    assert response.status_code == 400 and "now" in error_of(response)["fields"]
    assert clients[0].post(_url(match_id, "ready/")).status_code == 200  # no body at all


def test_a_reported_match_has_no_lifecycle(ladder, player, opponent, api):
    match = match_report(
        ladder=ladder,
        reporter=player,
        sides=[SideInput([player], 1), SideInput([opponent], 2)],
        played_at=timezone.now(),
    )
    body = api.get(_url(match.pk)).json()
    assert body["ready_deadline"] is None and body["cancel_reason"] is None and body["cancelled_at"] is None
    assert {(s["ready"], s["cancel_requested"], s["no_show_claimed"]) for s in body["sides"]} == {(False, False, False)}
