"""GET and POST /api/v1/matches/<id>/comments/ and /evidence/: shapes, who may, limits and errors."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.matches import conversation as svc
from ladder.models import Evidence, MatchComment
from notifications.models import Kind, Notification
from tests.api.conftest import error_of
from tests.ladder.test_conversation import pending_match

pytestmark = pytest.mark.django_db


@pytest.fixture
def match(ladder, player, opponent):
    return pending_match(ladder, player, opponent)


def comments_url(match) -> str:
    return f"/api/v1/matches/{match.pk}/comments/"


def evidence_url(match) -> str:
    return f"/api/v1/matches/{match.pk}/evidence/"


def test_player_comments_and_anyone_reads_oldest_first(api, client_for, match, player, opponent):
    first = client_for(player).post(comments_url(match), {"body": "  <b>gg</b>  "}, format="json")
    client_for(opponent).post(comments_url(match), {"body": "rematch?"}, format="json")

    assert first.status_code == 201, first.json()
    body = first.json()
    assert set(body) == {"id", "author", "body", "created_at"}
    assert body["author"] == {"username": "alice", "is_bot": False}
    assert body["body"] == "<b>gg</b>"  # plain text, stripped; escaping is the reader's job
    listed = api.get(comments_url(match))
    assert listed.status_code == 200
    page = listed.json()
    assert set(page) == {"count", "next", "previous", "results"}
    assert [c["body"] for c in page["results"]] == ["<b>gg</b>", "rematch?"]


def test_comment_notifies_the_other_side(client_for, match, player, opponent):
    client_for(player).post(comments_url(match), {"body": "gg"}, format="json")

    assert list(Notification.objects.filter(kind=Kind.COMMENTED).values_list("recipient_id", flat=True)) == [
        opponent.pk
    ]


def test_anonymous_may_not_comment(api, match):
    response = api.post(comments_url(match), {"body": "hi"}, format="json")

    assert response.status_code == 401
    assert not MatchComment.objects.exists()


def test_outsider_gets_403(client_for, match, outsider):
    response = client_for(outsider).post(comments_url(match), {"body": "hi"}, format="json")

    assert response.status_code == 403
    assert error_of(response) == {"code": "not_participant", "message": svc.MAY_NOT_COMMENT, "fields": {}}


def test_read_only_token_may_not_comment(client_for, match, player):
    response = client_for(player, read_only=True).post(comments_url(match), {"body": "hi"}, format="json")

    assert response.status_code == 403


def test_unknown_match_is_404(api, client_for, player):
    assert api.get("/api/v1/matches/999999/comments/").status_code == 404
    assert client_for(player).post("/api/v1/matches/999999/comments/", {"body": "x"}, format="json").status_code == 404


def test_exactly_2000_characters_pass_and_2001_is_a_400_naming_body(client_for, match, player):
    client = client_for(player)

    assert client.post(comments_url(match), {"body": "x" * 2000}, format="json").status_code == 201
    response = client.post(comments_url(match), {"body": "x" * 2001}, format="json")

    assert response.status_code == 400
    assert list(error_of(response)["fields"]) == ["body"]


@pytest.mark.parametrize("body", [{}, {"body": "   "}, {"body": "hi", "extra": 1}, {"body": ["hi"]}, {"body": 0}])
def test_bad_bodies_are_400(client_for, match, player, body):
    response = client_for(player).post(comments_url(match), body, format="json")

    assert response.status_code == 400
    assert error_of(response)["fields"]


def test_rate_limit_is_429_with_retry_after(client_for, match, player):
    now = timezone.now() - timedelta(minutes=2)
    MatchComment.objects.bulk_create(
        [MatchComment(match=match, author=player, body="x", created_at=now) for _ in range(10)]
    )

    response = client_for(player).post(comments_url(match), {"body": "more"}, format="json")

    assert response.status_code == 429
    assert error_of(response)["code"] == "comment_limit"
    assert 470 <= int(response["Retry-After"]) <= 480


def test_player_adds_evidence_and_anyone_reads_it(api, client_for, match, opponent):
    response = client_for(opponent).post(evidence_url(match), {"url": "https://example.com/r/1"}, format="json")

    assert response.status_code == 201, response.json()
    assert set(response.json()) == {"id", "side", "added_by", "url", "created_at"}
    assert response.json()["side"] == 1
    listed = api.get(evidence_url(match)).json()
    assert [row["url"] for row in listed["results"]] == ["https://example.com/r/1"]


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://example.com/replay.wrf"])
def test_evidence_refuses_other_schemes(client_for, match, player, url):
    response = client_for(player).post(evidence_url(match), {"url": url}, format="json")

    assert response.status_code == 400
    assert list(error_of(response)["fields"]) == ["url"]
    assert not Evidence.objects.exists()


def test_duplicate_evidence_is_409(client_for, match, player):
    client = client_for(player)
    client.post(evidence_url(match), {"url": "https://example.com/a"}, format="json")

    response = client.post(evidence_url(match), {"url": "https://example.com/a"}, format="json")

    assert response.status_code == 409
    assert error_of(response)["code"] == "duplicate"


def test_moderator_may_not_add_evidence(client_for, match, moderator):
    response = client_for(moderator).post(evidence_url(match), {"url": "https://example.com/a"}, format="json")

    assert response.status_code == 403
    assert error_of(response)["message"] == svc.MODERATOR_EVIDENCE


def test_schema_declares_the_limits(api):
    schema = api.get("/api/v1/schema/").json()
    comment_in = schema["components"]["schemas"]["CommentInRequest"]

    assert comment_in["additionalProperties"] is False
    assert comment_in["properties"]["body"]["maxLength"] == 2000
    assert "post" in schema["paths"]["/api/v1/matches/{id}/comments/"]
    assert "get" in schema["paths"]["/api/v1/matches/{id}/evidence/"]
