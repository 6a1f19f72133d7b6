"""Void and correct answer 202 with a replay job; the job's status URL says how far it got."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from ladder.models import Match, MatchStatus
from ratings.models import PlayerRating, RatingEvent, ReplayJob
from ratings.services import ladder_replay
from ratings.tasks import run_replay_job_task
from tests.api.conftest import error_of, report_body
from tests.factories import moderator_account

pytestmark = pytest.mark.django_db
FIELDS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")


def standings(ladder) -> dict[int, tuple]:
    return {row.player_id: tuple(getattr(row, f) for f in FIELDS) for row in PlayerRating.objects.filter(ladder=ladder)}


def assert_equals_a_full_replay(ladder) -> None:
    live = standings(ladder)
    ladder_replay(ladder=ladder)
    for player, values in standings(ladder).items():
        for name, a, b in zip(FIELDS, live[player], values, strict=True):
            assert a == (pytest.approx(b, abs=1e-9) if isinstance(a, float) else b), (player, name)


@pytest.fixture
def rated(client_for, ladder, player, opponent, trusted):
    """Three results from the game server, confirmed and rated at once: alice won, then bob twice."""
    server = client_for(trusted)
    now = timezone.now()
    bodies = [report_body(ladder, played_at=(now - timedelta(hours=3)).isoformat())]
    for hours in (2, 1):
        bodies.append(report_body(ladder, a="bob", b="alice", played_at=(now - timedelta(hours=hours)).isoformat()))
    ids = [server.post("/api/v1/matches/", body, format="json").json()["id"] for body in bodies]
    return [Match.objects.get(pk=pk) for pk in ids]


@pytest.mark.django_db(transaction=True)  # the request's commit runs the job, as in the embedded setup
def test_void_answers_202_with_the_job_and_with_eager_celery_it_is_done(
    client_for, ladder, rated, moderator_anywhere, celery_eager
):
    response = client_for(moderator_anywhere).post(
        f"/api/v1/matches/{rated[0].pk}/void/", {"reason": "bot"}, format="json"
    )

    assert response.status_code == 202, response.json()
    body = response.json()
    job = ReplayJob.objects.get()
    assert body["status_url"] == f"/api/v1/replay-jobs/{job.pk}/"
    assert response["Location"] == f"http://testserver/api/v1/replay-jobs/{job.pk}/"
    assert body["match"]["status"] == MatchStatus.VOID and body["match"]["id"] == rated[0].pk
    assert body["job"]["status"] == "done" and body["job"]["percent"] == 100
    assert body["job"] | {"created_at": None, "started_at": None, "finished_at": None} == {
        "id": job.pk,
        "ladder": ladder.slug,
        "kind": "void",
        "match": rated[0].pk,
        "status": "done",
        "events_done": 2,
        "events_total": 2,
        "percent": 100,
        "error": "",
        "requested_by": "mod",
        "created_at": None,
        "started_at": None,
        "finished_at": None,
        "url": body["status_url"],
    }
    assert PlayerRating.objects.get(ladder=ladder, player__username="alice").games == 2
    assert_equals_a_full_replay(ladder)


def queued_messages(job_id: int) -> list[bytes]:
    """The broker's messages that run replay job ``job_id``, waiting in the suite's queue."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    found = []
    for raw in client.lrange(settings.CELERY_TASK_DEFAULT_QUEUE, 0, -1):
        headers = json.loads(raw)["headers"]
        if headers["task"] == "ratings.tasks.run_replay_job_task" and headers["argsrepr"] == f"({job_id},)":
            found.append(raw)
    return found


def test_without_eager_celery_the_request_returns_before_replaying(
    client, client_for, ladder, rated, moderator, django_capture_on_commit_callbacks
):
    before = standings(ladder)
    mod = client_for(moderator)
    # The other worker's tests number their jobs from 1 too and share the broker: count only new messages.
    waiting = set(redis.Redis.from_url(settings.CELERY_BROKER_URL).lrange(settings.CELERY_TASK_DEFAULT_QUEUE, 0, -1))

    with django_capture_on_commit_callbacks(execute=True):  # sent to the broker, as in production
        response = mod.post(f"/api/v1/matches/{rated[1].pk}/void/", {"reason": "wrong players"}, format="json")

    job = ReplayJob.objects.get()
    messages = [raw for raw in queued_messages(job.pk) if raw not in waiting]
    try:
        assert response.status_code == 202
        assert response.json()["job"]["status"] == "queued" and response.json()["job"]["percent"] is None
        assert len(messages) == 1  # waiting for a worker
        assert standings(ladder) == before  # the request replayed nothing
        assert "Being re-rated." in client.get(rated[2].get_absolute_url()).text
        status = mod.get(response.json()["status_url"])
        assert status.status_code == 200 and status.json()["status"] == "queued"

        run_replay_job_task(job.pk)  # what the worker does with the message

        status = mod.get(response.json()["status_url"]).json()
        assert status["status"] == "done" and status["percent"] == 100 and status["events_total"] == 1
        assert "Being re-rated." not in client.get(rated[2].get_absolute_url()).text
        assert_equals_a_full_replay(ladder)
    finally:
        for raw in messages:
            redis.Redis.from_url(settings.CELERY_BROKER_URL).lrem(settings.CELERY_TASK_DEFAULT_QUEUE, 0, raw)


@pytest.mark.django_db(transaction=True)
def test_correct_answers_202_and_the_job_replays_the_new_result(
    client_for, ladder, rated, moderator_anywhere, celery_eager
):
    response = client_for(moderator_anywhere).post(
        f"/api/v1/matches/{rated[0].pk}/correct/", {"placements": [2, 1], "reason": "swapped"}, format="json"
    )

    assert response.status_code == 202
    assert [side["outcome"] for side in response.json()["match"]["sides"]] == ["Lost", "Won"]
    assert response.json()["job"]["kind"] == "correct" and response.json()["job"]["status"] == "done"
    assert PlayerRating.objects.get(ladder=ladder, player__username="alice").wins == 0
    assert_equals_a_full_replay(ladder)


def test_a_match_never_rated_needs_no_job_200(client_for, ladder, player, opponent, moderator):
    pending = client_for(player).post("/api/v1/matches/", report_body(ladder), format="json").json()

    response = client_for(moderator).post(f"/api/v1/matches/{pending['id']}/void/", {"reason": "x"}, format="json")

    assert response.status_code == 200
    assert response.json()["job"] is None and response.json()["status_url"] is None
    assert response.json()["match"]["status"] == MatchStatus.VOID
    assert "Location" not in response
    assert not ReplayJob.objects.exists()


def test_correcting_a_void_match_is_a_409(client_for, ladder, rated, moderator, django_capture_on_commit_callbacks):
    mod = client_for(moderator)
    with django_capture_on_commit_callbacks():
        mod.post(f"/api/v1/matches/{rated[0].pk}/void/", {"reason": "x"}, format="json")

    response = mod.post(f"/api/v1/matches/{rated[0].pk}/correct/", {"placements": [2, 1], "reason": "y"}, format="json")

    assert response.status_code == 409 and error_of(response)["code"] == "already_void"
    assert ReplayJob.objects.count() == 1


def test_who_may_read_a_job(api, client_for, ladder, rated, moderator, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        mod = client_for(moderator)
        url = mod.post(f"/api/v1/matches/{rated[0].pk}/void/", {"reason": "x"}, format="json").json()["status_url"]
    other_moderator = moderator_account("mod2")

    assert mod.get(url).status_code == 200
    assert client_for(other_moderator).get(url).status_code == 200
    anonymous = api.get(url)
    assert anonymous.status_code == 401 and error_of(anonymous)["code"] == "not_authenticated"
    participant = client_for(rated[0].participants.first().player).get(url)
    assert participant.status_code == 403 and error_of(participant)["code"] == "not_moderator"
    assert mod.get("/api/v1/replay-jobs/999999/").status_code == 404
    assert mod.post(url, {}, format="json").status_code == 405
    assert RatingEvent.objects.filter(match=rated[0], is_active=False).exists()


def test_the_schema_documents_202_and_the_job_endpoint(api):
    schema = api.get("/api/v1/schema/").json()
    void = schema["paths"]["/api/v1/matches/{id}/void/"]["post"]["responses"]
    assert {"200", "202", "409"} <= set(void)
    assert void["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/DecisionOut")
    job = schema["paths"]["/api/v1/replay-jobs/{id}/"]["get"]["responses"]
    assert {"200", "401", "403", "404"} <= set(job)
