"""Every operation's real answers, recorded while the flows run, validate against the schema.

The flows a bot plays (queue, Ready, result, confirm; a party's 2 v 2; a report and its dispute;
comments, evidence, notifications; a moderator's void and its replay job; the public reads) run
through the API with the cast's clients; ``tests.api.openapi.Recorder`` holds each answer
against the published schema with a strict OpenAPI 3.0 validator. Every operation answers at
least once, and its refusals (404, 400, 409) validate too.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.moderation.reports import player_report_file
from ladder.standings.nightly import leaderboard_snapshot, local_midnight
from notifications.models import Kind
from notifications.services import notify
from seasons.models import Season, SeasonStatus
from tests.api.openapi import Recorded, Recorder
from tests.factories import LadderFactory, member
from tournaments.services import tournament_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def recorder(api) -> Recorder:
    return Recorder(api.get("/api/v1/schema/").json())


def test_every_operation_answers_as_the_schema_says(
    recorder, api, client_for, ladder, player, opponent, moderator_anywhere, celery_eager
):
    anon = Recorded(api, recorder)
    alice, bob = Recorded(client_for(player), recorder), Recorded(client_for(opponent), recorder)
    carol_user = member(ladder, "carol")
    carol = Recorded(client_for(carol_user), recorder)
    mod = Recorded(client_for(moderator_anywhere), recorder)
    slug = ladder.slug

    # Public reads, before and after play.
    anon.get("/api/v1/ladders/")
    anon.get(f"/api/v1/ladders/{slug}/")
    anon.get("/api/v1/ladders/nowhere/")
    alice.get("/api/v1/me/")
    anon.get("/api/v1/me/")
    player_report_file(ladder=ladder, player=carol_user, reporter=player, reason="abuse", text="t", now=timezone.now())
    notify(Kind.FAIR_PLAY, [player.pk], key="fair-play:test", ladder_id=ladder.pk, data={"marks": 3, "of": 7})
    alice.get("/api/v1/me/fair-play/")
    anon.get("/api/v1/me/fair-play/")
    alice.get("/api/v1/me/export/")
    anon.get("/api/v1/me/export/")

    # The queue: alice searches, polls, bob searches and they are paired; both Ready; alice reports; bob confirms.
    queue = f"/api/v1/ladders/{slug}/queue/"
    assert alice.post(queue).status_code == 201
    assert alice.get(queue).json()["status"] == "waiting"
    alice.post(queue)  # already searching: 409
    assert bob.post(queue).status_code == 201
    polled = alice.get(queue).json()
    assert polled["status"] == "matched" and polled["opponent"]["username"] == "bob"
    match_id = polled["match"]
    assert alice.get(f"/api/v1/matches/{match_id}/").json()["series"] is None
    alice.post(f"/api/v1/matches/{match_id}/result/")  # not ready: 409
    for client in (alice, bob):
        assert client.post(f"/api/v1/matches/{match_id}/ready/").status_code == 200
    alice.post(f"/api/v1/matches/{match_id}/no-show/answer/")  # no claim: 409
    alice.post(f"/api/v1/matches/{match_id}/games/")  # not a series: 409
    result = alice.post(f"/api/v1/matches/{match_id}/result/", {"placements": [1, 2]})
    assert result.status_code == 200, result.json()
    alice.post(f"/api/v1/matches/{match_id}/confirm/")  # own report: 403
    assert bob.post(f"/api/v1/matches/{match_id}/confirm/").status_code == 200
    alice.get(queue)
    alice.delete(queue)  # not searching: 409

    # A second pair that cancels by agreement and a third with a no-show claim.
    carol.post(queue)
    bob.post(queue)
    second = carol.get(queue).json()["match"]
    carol.post(f"/api/v1/matches/{second}/cancel/")
    bob.post(f"/api/v1/matches/{second}/cancel/")
    carol.post(queue)
    carol.delete(queue)
    alice.post(queue)
    carol.post(queue)
    third = alice.get(queue).json()["match"]
    alice.post(f"/api/v1/matches/{third}/ready/")
    carol.post(f"/api/v1/matches/{third}/ready/")
    alice.post(f"/api/v1/matches/{third}/no-show/")
    carol.post(f"/api/v1/matches/{third}/no-show/answer/", {"answer": "played"})

    # A report by alice that bob disputes, then every dispute of carol's reports; comments and evidence.
    report = {"ladder": slug, "sides": [{"players": ["alice"], "placement": 1}, {"players": ["bob"], "placement": 2}]}
    reported = alice.post("/api/v1/matches/", report)
    assert reported.status_code == 201, reported.json()
    pending = reported.json()["id"]
    alice.post("/api/v1/matches/", {**report, "sides": [{"players": ["bob"], "placement": 1}]})  # 400
    bob.post(f"/api/v1/matches/{pending}/dispute/", {"reason": "I won"})
    carol.post("/api/v1/matches/dispute-all/", {"reporter": "alice"})
    alice.post(f"/api/v1/matches/{pending}/comments/", {"body": "gg"})
    anon.get(f"/api/v1/matches/{pending}/comments/")
    alice.post(f"/api/v1/matches/{pending}/evidence/", {"url": "https://example.com/replay/1"})
    anon.get(f"/api/v1/matches/{pending}/evidence/")
    anon.get("/api/v1/matches/", {"ladder": slug})
    anon.get("/api/v1/matches/999999/")
    anon.get("/api/v1/players/bob/matches/")

    # A moderator's decisions and the replay job they start.
    voided = mod.post(f"/api/v1/matches/{match_id}/void/", {"reason": "test"})
    assert voided.status_code in {200, 202}, voided.json()
    mod.post(f"/api/v1/matches/{pending}/correct/", {"placements": [2, 1], "reason": "swapped"})
    if (job := voided.json().get("job")) is not None:
        mod.get(f"/api/v1/replay-jobs/{job['id']}/")
    mod.get("/api/v1/replay-jobs/999999/")

    # A party's 2 v 2 in a ladder of teams.
    LadderFactory(slug="teams", allow_teams=True, queue_formats="1v1,2v2", rematch_cooldown_minutes=0)
    for client in (alice, bob, carol):
        client.post("/api/v1/ladders/teams/membership/")
    party = "/api/v1/ladders/teams/party/"
    alice.get(party)
    alice.post(party + "invitations/", {"username": "bob"})
    alice.post(party + "invitations/", {"username": "carol"})
    alice.delete(party + "invitations/carol/")
    invited = bob.get(party).json()
    party_id = invited["invitations"][0]["party"]
    bob.post(f"{party}invitations/{party_id}/accept/")
    carol.post(f"{party}invitations/{party_id}/decline/")
    alice.get(party)
    alice.post("/api/v1/ladders/teams/queue/", {"formats": ["2v2"]})
    alice.get("/api/v1/ladders/teams/queue/")
    bob.post(party + "leave/")
    bob.delete("/api/v1/ladders/teams/membership/")

    # Notifications, read by ids and all at once.
    listed = bob.get("/api/v1/notifications/").json()
    ids = [row["id"] for row in listed["results"]][:2]
    bob.post("/api/v1/notifications/read/", {"ids": ids or [1]})
    bob.post("/api/v1/notifications/read/", {"all": True})
    bob.post("/api/v1/notifications/read/", {})  # 400

    # The rest of the public reads: leaderboard, win probability, players, history, stats, snapshots, seasons.
    anon.get(f"/api/v1/ladders/{slug}/leaderboard/")
    anon.get(f"/api/v1/ladders/{slug}/leaderboard/", {"page": 99})
    anon.get(f"/api/v1/ladders/{slug}/win-probability/", {"a": "alice", "b": "bob"})
    anon.get("/api/v1/players/alice/")
    anon.get("/api/v1/players/ghost/")
    anon.get(f"/api/v1/players/alice/ladders/{slug}/history/")
    anon.get("/api/v1/players/alice/versus/bob/", {"ladder": slug})
    anon.get(f"/api/v1/ladders/{slug}/stats/", {"field": "map"})
    snapshot = leaderboard_snapshot(ladder=ladder, midnight=local_midnight(ladder=ladder, at=timezone.now()))
    anon.get(f"/api/v1/ladders/{slug}/snapshots/")
    anon.get(f"/api/v1/ladders/{slug}/snapshots/{snapshot.date.isoformat()}/")
    now = timezone.now()
    season = Season.objects.create(
        ladder=ladder,
        name="Spring",
        starts_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=9),
        status=SeasonStatus.RUNNING,
    )
    anon.get(f"/api/v1/ladders/{slug}/seasons/")
    anon.get(f"/api/v1/ladders/{slug}/seasons/{season.pk}/")
    alice.delete(f"/api/v1/ladders/{slug}/membership/")
    alice.post(f"/api/v1/ladders/{slug}/membership/")

    # A tournament played through the API: entries, a withdrawal, the start, the pairing's match, the end.
    cup = tournament_create(
        ladder=ladder,
        by=moderator_anywhere,
        name="Cup",
        slug="cup",
        rounds=1,
        check_in_minutes=0,
        registration_closes_at=now + timedelta(hours=1),
        starts_at=now + timedelta(hours=1),
    )
    base = f"/api/v1/ladders/{slug}/tournaments/"
    anon.get(base)
    anon.get("/api/v1/ladders/nowhere/tournaments/")
    anon.get(f"{base}{cup.slug}/")
    anon.get(f"{base}nothing/")
    anon.get(f"{base}{cup.slug}/standings/")
    anon.get(f"{base}{cup.slug}/pairings/")
    assert alice.post(f"{base}{cup.slug}/entry/").status_code == 201
    alice.post(f"{base}{cup.slug}/entry/")  # already entered: 409
    alice.post(f"{base}{cup.slug}/entry/", {"teammates": ["ghost"]})  # no such player: 400
    alice.post(f"{base}{cup.slug}/entry/check-in/")  # no check-in: 409
    assert alice.post(f"{base}{cup.slug}/entry/bye/", {"round": 1}).status_code == 201
    assert alice.post(f"{base}{cup.slug}/entry/bye/", {"round": 1}).status_code == 409  # one bye an entry
    assert alice.post(f"{base}{cup.slug}/entry/bye/", {"round": 9}).status_code == 400  # no such round
    assert alice.delete(f"{base}{cup.slug}/entry/bye/").status_code == 200  # alice plays after all
    assert alice.delete(f"{base}{cup.slug}/entry/bye/").status_code == 409  # no bye to cancel
    assert bob.post(f"{base}{cup.slug}/entry/").status_code == 201
    assert carol.post(f"{base}{cup.slug}/entry/").status_code == 201
    assert carol.delete(f"{base}{cup.slug}/entry/").status_code == 200
    carol.delete(f"{base}{cup.slug}/entry/")  # withdrawn already: 409
    bob.post(f"{base}{cup.slug}/actions/", {"action": "start"})  # not a moderator: 403
    mod.post(f"{base}{cup.slug}/actions/", {"action": "pause"})  # not running: 409
    assert mod.post(f"{base}{cup.slug}/actions/", {"action": "start"}).status_code == 200
    board = alice.get(f"{base}{cup.slug}/pairings/").json()["boards"][0]
    for client in (alice, bob):
        client.post(f"/api/v1/matches/{board['match']}/ready/")
    first = alice if board["a"] == "alice" else bob
    second = bob if first is alice else alice
    first.post(f"/api/v1/matches/{board['match']}/result/", {"placements": [1, 2]})
    second.post(f"/api/v1/matches/{board['match']}/confirm/")
    assert anon.get(f"{base}{cup.slug}/").json()["status"] == "finished"
    assert anon.get(f"{base}{cup.slug}/standings/").json()[0]["entry"] == board["a"]

    operations = {
        operation["operationId"]
        for operations in recorder.schema["paths"].values()
        for operation in operations.values()
    }
    assert operations - set(recorder.answered) == set()


def test_a_503_and_a_429_answer_as_declared_with_retry_after(recorder, client_for, ladder, player, rf):
    """The 503 of an unreachable Redis (core.middleware) and a queue cooldown's 429, held to the schema."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    from core.middleware import ServiceUnavailableMiddleware

    request = rf.get("/api/v1/ladders/")
    unavailable = ServiceUnavailableMiddleware(lambda request: None).process_exception(request, RedisConnectionError())
    assert unavailable is not None and unavailable.status_code == 503
    recorder.check("get", "/api/v1/ladders/", unavailable)
    alice = Recorded(client_for(player), recorder)
    queue = f"/api/v1/ladders/{ladder.slug}/queue/"
    alice.post(queue)
    alice.delete(queue)
    again = alice.post(queue)
    assert again.status_code == 429 and int(again["Retry-After"]) > 0
    assert recorder.codes == {"unavailable", "queue_cooldown"}
