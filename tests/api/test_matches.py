from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from api.models import IdempotencyKey
from ladder.matches.checks import OWN_REPORT
from ladder.matches.reporting import DUPLICATE_REPORT
from ladder.models import Match, MatchStatus
from ratings.models import PlayerRating
from tests.api.conftest import error_of, report_body
from tests.factories import member

pytestmark = pytest.mark.django_db


def test_player_reports_and_opponent_confirms(client_for, ladder, player, opponent):
    response = client_for(player).post("/api/v1/matches/", report_body(ladder), format="json")
    assert response.status_code == 201, response.json()
    match = response.json()
    assert match["status"] == "pending" and match["format"] == "1v1" and not match["rated"]
    assert [s["players"][0]["username"] for s in match["sides"]] == ["alice", "bob"]
    assert match["sides"][0]["outcome"] == "Won"

    confirmed = client_for(opponent).post(f"/api/v1/matches/{match['id']}/confirm/", {}, format="json")
    assert confirmed.status_code == 200
    body = confirmed.json()
    assert body["status"] == "confirmed" and body["rated"]
    assert body["sides"][0]["players"][0]["delta"] > 0 > body["sides"][1]["players"][0]["delta"]


def test_reporter_cannot_confirm_own_report(client_for, ladder, player, opponent):
    client = client_for(player)
    match = client.post("/api/v1/matches/", report_body(ladder), format="json").json()
    response = client.post(f"/api/v1/matches/{match['id']}/confirm/", {}, format="json")
    assert response.status_code == 403
    assert error_of(response) == {"code": "own_report", "message": OWN_REPORT, "fields": {}}


def test_outsider_cannot_report_or_confirm(client_for, ladder, player, opponent):
    bystander = member(ladder, "bystander")  # a member of the ladder, but not in the match
    response = client_for(bystander).post("/api/v1/matches/", report_body(ladder), format="json")
    assert response.status_code == 403
    assert error_of(response)["code"] == "reporter_not_in_match"
    match = client_for(player).post("/api/v1/matches/", report_body(ladder), format="json").json()
    response = client_for(bystander).post(f"/api/v1/matches/{match['id']}/confirm/", {}, format="json")
    assert response.status_code == 403
    assert error_of(response)["code"] == "not_participant"


def test_opponent_disputes_then_cannot_answer_again(client_for, ladder, player, opponent):
    match = client_for(player).post("/api/v1/matches/", report_body(ladder), format="json").json()
    client = client_for(opponent)
    response = client.post(f"/api/v1/matches/{match['id']}/dispute/", {"reason": "I won"}, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "disputed"
    assert response.json()["sides"][1]["dispute_reason"] == "I won"
    again = client.post(f"/api/v1/matches/{match['id']}/confirm/", {}, format="json")
    assert again.status_code == 409
    assert error_of(again)["code"] == "not_pending"


def test_duplicate_report_is_409(client_for, ladder, player, opponent):
    client = client_for(player)
    first = client.post("/api/v1/matches/", report_body(ladder), format="json").json()
    response = client.post("/api/v1/matches/", report_body(ladder), format="json")
    assert response.status_code == 409
    assert error_of(response)["message"] == DUPLICATE_REPORT % {"match": first["id"]}


def test_trusted_reporter_reports_are_rated_at_once(client_for, ladder, player, opponent, trusted):
    response = client_for(trusted).post("/api/v1/matches/", report_body(ladder), format="json")
    assert response.status_code == 201
    assert response.json()["status"] == "confirmed" and response.json()["rated"]
    assert response.json()["confirmation"] == "trusted"


def test_free_for_all_and_teams_with_placements(client_for, ladder, player, opponent, trusted):
    ladder.allow_free_for_all = ladder.allow_teams = True
    ladder.save()
    for name in ("carol", "dave"):
        member(ladder, name)
    client = client_for(trusted)
    ffa = {
        "ladder": ladder.slug,
        "sides": [
            {"players": ["alice"], "placement": 2},
            {"players": ["BOB"], "placement": 1},
            {"players": ["carol"], "placement": 3},
        ],
    }
    response = client.post("/api/v1/matches/", ffa, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["format"] == "ffa"
    assert [s["outcome"] for s in response.json()["sides"]] == ["2nd", "1st", "3rd"]
    teams = {
        "ladder": ladder.slug,
        "sides": [{"players": ["alice", "bob"], "placement": 1}, {"players": ["carol", "dave"], "placement": 1}],
        "played_at": (timezone.now() - timedelta(hours=2)).isoformat(),
    }
    response = client.post("/api/v1/matches/", teams, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["format"] == "teams"
    assert [s["outcome"] for s in response.json()["sides"]] == ["Draw", "Draw"]


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"sides": []}, "ladder", "missing_field"),
        ({"extra": 1}, "extra", "unknown_field"),
        ({"sides": [{"players": ["alice"], "placement": 1}]}, "sides", "min_length"),
        (
            {"sides": [{"players": ["alice"], "placement": "first"}, {"players": ["bob"], "placement": 2}]},
            "sides.0.placement",
            "invalid",
        ),
        (
            {"sides": [{"players": ["alice"], "placement": 0}, {"players": ["bob"], "placement": 2}]},
            "sides.0.placement",
            "min_value",
        ),
        (
            {"sides": [{"players": ["alice"], "placement": 1}, {"players": ["nobody"], "placement": 2}]},
            "sides.1.players",
            "no_such_player",
        ),
        (
            {"sides": [{"players": "alice", "placement": 1}, {"players": ["bob"], "placement": 2}]},
            "sides.0.players",
            "not_a_list",
        ),
        ({"played_at": "yesterday"}, "played_at", "invalid"),
    ],
)
def test_bad_report_bodies_are_400_naming_the_field(client_for, ladder, player, opponent, body, field, code):
    payload = {**report_body(ladder), **body}
    if field == "ladder":
        payload.pop("ladder")
    response = client_for(player).post("/api/v1/matches/", payload, format="json")
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert field in error["fields"], error
    assert error["code"] == code, error


def test_service_refusals_are_400_with_message(client_for, ladder, player, opponent):
    future = (timezone.now() + timedelta(days=1)).isoformat()
    response = client_for(player).post("/api/v1/matches/", report_body(ladder, played_at=future), format="json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "played_in_future"


def test_unknown_ladder_is_400(client_for, player, opponent, ladder):
    response = client_for(player).post("/api/v1/matches/", {**report_body(ladder), "ladder": "nope"}, format="json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "no_such_ladder"


def test_anonymous_cannot_report(api, ladder, player, opponent):
    response = api.post("/api/v1/matches/", report_body(ladder), format="json")
    assert response.status_code == 401


def test_read_only_token_cannot_report(client_for, ladder, player, opponent):
    response = client_for(player, read_only=True).post("/api/v1/matches/", report_body(ladder), format="json")
    assert response.status_code == 403
    assert not Match.objects.exists()


# Idempotency (on PostgreSQL's prepared statements and on the ORM path) -------------------


@pytest.mark.usefixtures("sql_or_orm")
def test_same_idempotency_key_and_body_returns_the_original(client_for, ladder, player, opponent):
    client = client_for(player)
    first = client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Match.objects.count() == 1


@pytest.mark.usefixtures("sql_or_orm")
def test_same_idempotency_key_with_another_body_is_409(client_for, ladder, player, opponent):
    client = client_for(player)
    client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    other = report_body(ladder, played_at=(timezone.now() - timedelta(hours=1)).isoformat())
    response = client.post("/api/v1/matches/", other, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert response.status_code == 409
    assert error_of(response)["code"] == "idempotency_key_reused"
    assert Match.objects.count() == 1


@pytest.mark.usefixtures("sql_or_orm")
def test_idempotency_keys_are_per_user(client_for, ladder, player, opponent, trusted):
    client_for(player).post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k")
    other = report_body(ladder, played_at=(timezone.now() - timedelta(hours=1)).isoformat())
    response = client_for(trusted).post("/api/v1/matches/", other, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert response.status_code == 201


def test_a_keyed_report_takes_no_savepoint_and_a_refusal_in_it_stores_no_key(client_for, ladder, player, opponent):
    """The report runs in the key's transaction itself (``savepoint=False``): a duplicate refused
    inside it ends the transaction before the key's row is written."""
    client = client_for(player)
    with CaptureQueriesContext(connection) as queries:
        first = client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201
    # One: the key's block itself, a savepoint only because the test runs in a transaction of its own.
    assert len([query for query in queries if query["sql"].startswith("SAVEPOINT")]) == 1

    again = client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k-2")
    assert again.status_code == 409 and error_of(again)["code"] == "duplicate"
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["k-1"]


@pytest.mark.usefixtures("sql_or_orm")
def test_a_keyed_report_writes_its_key_once_with_its_response(client_for, ladder, player, opponent):
    table = IdempotencyKey._meta.db_table
    with CaptureQueriesContext(connection) as queries:
        response = client_for(player).post(
            "/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k-1"
        )
    assert response.status_code == 201
    touching = [q["sql"].lstrip() for q in queries if table in q["sql"]]
    assert len(touching) == 1 and touching[0].startswith("INSERT")  # no look-up before, no update after
    assert IdempotencyKey.objects.get().response_body == response.json()


@pytest.mark.usefixtures("sql_or_orm")
def test_a_retry_whose_report_is_written_again_is_rolled_back(client_for, ladder, player, opponent, trusted):
    """A retry without ``played_at`` is not a duplicate of its first request's game (a minute on,
    "now" is another minute): its report is written and rated, then rolled back when the key is
    found taken."""
    client = client_for(trusted)
    first = client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k")
    Match.objects.update(played_at=timezone.now() - timedelta(hours=1))  # the first request an hour ago
    ratings = list(PlayerRating.objects.order_by("pk").values_list("rating", "games"))

    again = client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k")

    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Match.objects.count() == 1
    assert list(PlayerRating.objects.order_by("pk").values_list("rating", "games")) == ratings


@pytest.mark.usefixtures("sql_or_orm")
def test_a_refused_report_does_not_use_up_its_key(client_for, ladder, player, opponent):
    client = client_for(player)
    future = report_body(ladder, played_at=(timezone.now() + timedelta(days=1)).isoformat())
    assert client.post("/api/v1/matches/", future, format="json", HTTP_IDEMPOTENCY_KEY="k").status_code == 400
    assert not IdempotencyKey.objects.exists()
    assert (
        client.post("/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="k").status_code == 201
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("same_body", [True, False])
def test_concurrent_requests_with_one_key_record_one_match(
    sql_or_orm, client_for, ladder, player, opponent, trusted, same_body
):
    """Six retries racing with one key: the first records the game, the others replay its
    answer (same body) or are refused (another body), and nothing is recorded twice."""
    import threading

    from django.db import connection

    clients = [client_for(trusted) for _ in range(6)]
    barrier = threading.Barrier(6)
    answers: list = []

    def report(number: int) -> None:
        played = timezone.now() - timedelta(hours=1 if same_body else number + 1)
        body = report_body(ladder, played_at=played.replace(minute=0, second=0, microsecond=0).isoformat())
        try:
            barrier.wait()
            answers.append(clients[number].post("/api/v1/matches/", body, format="json", HTTP_IDEMPOTENCY_KEY="k"))
        finally:
            connection.close()

    threads = [threading.Thread(target=report, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert Match.objects.filter(ladder=ladder).count() == 1
    assert IdempotencyKey.objects.get().response_status == 201
    first = [a for a in answers if a.status_code == 201 and not a.has_header("Idempotent-Replayed")]
    assert len(first) == 1
    others = [a for a in answers if a is not first[0]]
    if same_body:
        assert all(a.status_code == 201 and a["Idempotent-Replayed"] == "true" for a in others)
        assert all(a.json() == first[0].json() for a in others)
    else:
        assert all(a.status_code == 409 and error_of(a)["code"] == "idempotency_key_reused" for a in others)


def test_keys_older_than_the_setting_are_forgotten(client_for, ladder, player, opponent, trusted, settings):
    """The hourly clean-up forgets old keys; a retry after that is refused by the duplicate check."""
    from api.idempotency import expire
    from api.tasks import expire_idempotency_keys_task

    settings.API_IDEMPOTENCY_KEY_HOURS = 24
    client = client_for(trusted)
    body = report_body(ladder, played_at=(timezone.now() - timedelta(hours=1)).isoformat())
    assert client.post("/api/v1/matches/", body, format="json", HTTP_IDEMPOTENCY_KEY="old").status_code == 201
    other = report_body(ladder, played_at=(timezone.now() - timedelta(hours=3)).isoformat())
    assert client.post("/api/v1/matches/", other, format="json", HTTP_IDEMPOTENCY_KEY="new").status_code == 201
    IdempotencyKey.objects.filter(key="old").update(created_at=timezone.now() - timedelta(hours=24, seconds=1))
    IdempotencyKey.objects.filter(key="new").update(created_at=timezone.now() - timedelta(hours=23))

    assert expire_idempotency_keys_task.apply().get() == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new"]
    assert expire() == 0
    retry = client.post("/api/v1/matches/", body, format="json", HTTP_IDEMPOTENCY_KEY="old")
    assert retry.status_code == 409 and error_of(retry)["code"] == "duplicate"
    assert Match.objects.count() == 2


def test_bad_idempotency_key_is_400(client_for, ladder, player, opponent):
    response = client_for(player).post(
        "/api/v1/matches/", report_body(ladder), format="json", HTTP_IDEMPOTENCY_KEY="x" * 256
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_idempotency_key"


# Reading ---------------------------------------------------------------------------------


def test_fetch_and_list_with_filters(client_for, api, ladder, player, opponent, trusted):
    client = client_for(trusted)
    first = client.post("/api/v1/matches/", report_body(ladder), format="json").json()
    earlier = (timezone.now() - timedelta(days=3)).isoformat()
    client_for(player).post("/api/v1/matches/", report_body(ladder, played_at=earlier), format="json")
    assert api.get(f"/api/v1/matches/{first['id']}/").json() == first
    assert api.get("/api/v1/matches/").json()["count"] == 2
    assert api.get("/api/v1/matches/", {"status": "pending"}).json()["count"] == 1
    since = (timezone.now() - timedelta(days=1)).isoformat()
    assert [m["id"] for m in api.get("/api/v1/matches/", {"since": since}).json()["results"]] == [first["id"]]
    assert api.get("/api/v1/matches/", {"ladder": "nope"}).json()["count"] == 0
    assert api.get("/api/v1/matches/", {"player": "ALICE"}).json()["count"] == 2
    assert api.get("/api/v1/players/bob/matches/", {"status": "confirmed"}).json()["count"] == 1
    assert api.get("/api/v1/matches/", {"status": "won"}).status_code == 400
    assert api.get("/api/v1/matches/", {"player": "ghost"}).status_code == 400
    assert api.get("/api/v1/matches/999999/").status_code == 404


def test_match_list_query_count_is_constant(
    api, client_for, ladder, player, opponent, trusted, django_assert_max_num_queries
):
    client = client_for(trusted)
    for hours in range(5):
        played = (timezone.now() - timedelta(hours=hours * 2)).isoformat()
        client.post("/api/v1/matches/", report_body(ladder, played_at=played), format="json")
    with django_assert_max_num_queries(8):
        assert api.get("/api/v1/matches/").json()["count"] == 5


# Moderation ------------------------------------------------------------------------------


def test_moderator_voids_and_corrects(
    client_for, ladder, player, opponent, trusted, moderator, django_capture_on_commit_callbacks, celery_eager
):
    match = client_for(trusted).post("/api/v1/matches/", report_body(ladder), format="json").json()
    mod = client_for(moderator)
    with django_capture_on_commit_callbacks(execute=True):
        corrected = mod.post(
            f"/api/v1/matches/{match['id']}/correct/", {"placements": [2, 1], "reason": "swapped"}, format="json"
        )
    assert corrected.status_code == 202, corrected.json()
    assert [s["outcome"] for s in corrected.json()["match"]["sides"]] == ["Lost", "Won"]
    assert corrected.json()["job"]["kind"] == "correct"
    with django_capture_on_commit_callbacks(execute=True):
        voided = mod.post(f"/api/v1/matches/{match['id']}/void/", {"reason": "cheating"}, format="json")
    assert voided.status_code == 202
    assert voided.json()["match"]["status"] == MatchStatus.VOID
    assert voided.json()["job"]["kind"] == "void"
    again = mod.post(f"/api/v1/matches/{match['id']}/void/", {"reason": "twice"}, format="json")
    assert again.status_code == 409
    assert PlayerRating.objects.get(player=player, ladder=ladder).games == 0


@pytest.mark.parametrize("who", ["alice", "bob", "gameserver"])
def test_non_moderators_cannot_void_or_correct(client_for, ladder, player, opponent, trusted, who):
    from accounts.models import User

    match = client_for(trusted).post("/api/v1/matches/", report_body(ladder), format="json").json()
    client = client_for(User.objects.get(username=who))
    for action, body in (("void", {"reason": "x"}), ("correct", {"placements": [2, 1], "reason": "x"})):
        response = client.post(f"/api/v1/matches/{match['id']}/{action}/", body, format="json")
        assert response.status_code == 403
        assert error_of(response)["code"] == "not_moderator"


def test_void_needs_a_reason(client_for, ladder, player, opponent, trusted, moderator):
    match = client_for(trusted).post("/api/v1/matches/", report_body(ladder), format="json").json()
    response = client_for(moderator).post(f"/api/v1/matches/{match['id']}/void/", {}, format="json")
    assert response.status_code == 400
    assert "reason" in error_of(response)["fields"]


@pytest.mark.parametrize("reporter", ["trusted", "alice"])
def test_report_response_is_the_match_as_fetched_afterwards(client_for, ladder, player, opponent, trusted, reporter):
    """The 201 body is built from the rows just written, not read back: it must equal a fetch."""
    ladder.allow_free_for_all = ladder.allow_teams = True
    ladder.save()
    for name in ("carol", "dave", "erin"):
        member(ladder, name)
    user = trusted if reporter == "trusted" else player
    client = client_for(user)
    bodies = [
        report_body(ladder, played_at=(timezone.now() - timedelta(hours=2)).isoformat()),
        {
            "ladder": ladder.slug,
            "sides": [
                {"players": ["alice", "carol"], "placement": 2},
                {"players": ["BOB", "dave"], "placement": 1},
            ],
        },
        {
            "ladder": ladder.slug,
            "sides": [{"players": [name], "placement": p} for name, p in (("erin", 2), ("alice", 1), ("dave", 2))],
        },
    ]
    for body in bodies:
        response = client.post("/api/v1/matches/", body, format="json")
        assert response.status_code == 201, response.json()
        fetched = client.get(response.json()["url"])
        assert response.json() == fetched.json()
