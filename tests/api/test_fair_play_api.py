"""The fair-play limits through the API: their statuses, Retry-After, and dispute-all."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.models import Match, MatchStatus
from tests.api.conftest import error_of, report_body
from tests.factories import member
from tests.ladder.test_fair_play import fair_play

pytestmark = pytest.mark.django_db


@fair_play(report_limit_per_hour=2, review_unanswered_reports=0, review_one_sided_results=0)
def test_the_hourly_limit_is_a_429_with_retry_after(client_for, ladder, player, opponent):
    for name in ("carol", "dave"):
        member(ladder, name)
    api = client_for(player)
    assert api.post("/api/v1/matches/", report_body(ladder, "alice", "bob"), format="json").status_code == 201
    assert api.post("/api/v1/matches/", report_body(ladder, "alice", "carol"), format="json").status_code == 201

    response = api.post("/api/v1/matches/", report_body(ladder, "alice", "dave"), format="json")

    assert response.status_code == 429
    assert error_of(response)["code"] == "report_limit"
    assert 3590 <= int(response["Retry-After"]) <= 3600
    assert Match.objects.filter(ladder=ladder).count() == 2


@fair_play(pair_limit_per_day=1, review_unanswered_reports=0, review_one_sided_results=0)
def test_the_pair_limit_is_a_429(client_for, ladder, player, opponent):
    assert (
        client_for(opponent).post("/api/v1/matches/", report_body(ladder, "bob", "alice"), format="json").status_code
        == 201
    )
    response = client_for(player).post("/api/v1/matches/", report_body(ladder, "alice", "bob"), format="json")
    assert response.status_code == 429
    assert error_of(response)["code"] == "pair_limit"
    assert int(response["Retry-After"]) > 23 * 3600


@fair_play(backdate_hours=6)
def test_a_played_at_too_far_back_is_a_400_naming_the_field(client_for, ladder, player, opponent):
    played = (timezone.now() - timedelta(hours=7)).isoformat()
    response = client_for(player).post("/api/v1/matches/", report_body(ladder, played_at=played), format="json")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "backdated"
    assert "at most 6 hours ago" in error["fields"]["played_at"][0]


@fair_play(new_account_hours=24)
def test_a_new_account_is_a_403(client_for, ladder, opponent):
    newcomer = member(ladder, "newcomer", date_joined=timezone.now())  # signed up just now
    response = client_for(newcomer).post("/api/v1/matches/", report_body(ladder, a="newcomer"), format="json")
    assert response.status_code == 403
    assert error_of(response)["code"] == "new_account"


@fair_play(review_unanswered_reports=1)
def test_a_held_result_says_so_and_has_no_confirmation_deadline(client_for, ladder, player, opponent):
    body = client_for(player).post("/api/v1/matches/", report_body(ladder), format="json").json()
    assert body["held_for_review"] is True and body["confirms_at"] is None
    again = client_for(player).get(f"/api/v1/matches/{body['id']}/").json()
    assert again["held_for_review"] is True and again["confirms_at"] is None


@fair_play(review_unanswered_reports=0, pair_limit_per_day=0)
def test_dispute_all_disputes_one_reporters_pending_results(client_for, ladder):
    flooder, victim = member(ladder, "flooder"), member(ladder, "victim")
    now = timezone.now()
    ids = []
    for n in range(3):
        played = (now - timedelta(minutes=15 * n)).isoformat()
        response = client_for(flooder).post(
            "/api/v1/matches/", report_body(ladder, "flooder", "victim", played_at=played), format="json"
        )
        ids.append(response.json()["id"])

    response = client_for(victim).post(
        "/api/v1/matches/dispute-all/", {"reporter": "FLOODER", "reason": "Never played."}, format="json"
    )

    assert response.status_code == 200
    assert response.json() == {"count": 3, "matches": sorted(ids)}
    assert set(Match.objects.filter(pk__in=ids).values_list("status", flat=True)) == {MatchStatus.DISPUTED}
    again = client_for(victim).post("/api/v1/matches/dispute-all/", {"reporter": "flooder"}, format="json")
    assert again.json() == {"count": 0, "matches": []}


@pytest.mark.parametrize(
    ("body", "field"),
    [({"reporter": "nobody"}, "reporter"), ({"reporter": "flooder", "ladder": "nowhere"}, "ladder"), ({}, "reporter")],
)
@fair_play()
def test_dispute_all_names_the_bad_field(client_for, ladder, body, field):
    victim = member(ladder, "victim")
    member(ladder, "flooder")
    response = client_for(victim).post("/api/v1/matches/dispute-all/", body, format="json")
    assert response.status_code == 400
    assert field in error_of(response)["fields"]


@fair_play()
def test_dispute_all_needs_a_token_that_may_write(client_for, api, ladder):
    victim = member(ladder, "victim")
    member(ladder, "flooder")
    assert (
        client_for(victim, read_only=True)
        .post("/api/v1/matches/dispute-all/", {"reporter": "flooder"}, format="json")
        .status_code
        == 403
    )
    assert api.post("/api/v1/matches/dispute-all/", {"reporter": "flooder"}, format="json").status_code == 401
