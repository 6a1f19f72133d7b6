"""Download my data (docs/security.md, "Your data"): one JSON document of everything the site keeps
about an account, from Settings and from the API, checked against docs/personal-data.schema.json."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from jsonschema import Draft202012Validator

from accounts.models import LinkedIdentity
from api.models import ApiToken
from api.services import token_create
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.matches.conversation import comment_add
from ratings.models import PlayerRating, RatingChange
from ratings.services import rating_adjust
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "personal-data.schema.json").read_text())
EXPORT = reverse("data_export")


def valid(document: dict) -> dict:
    errors = sorted(
        Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER).iter_errors(document), key=str
    )
    assert not errors, [f"{list(error.path)}: {error.message}" for error in errors]
    return document


@pytest.fixture
def history(ladder, player, opponent, moderator):
    """alice beat bob, then they drew one bob reported and she confirmed; she commented, made a
    token, and a moderator adjusted her rating."""
    at = timezone.now() - timedelta(days=2)
    won = svc.match_report(
        ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)], played_at=at
    )
    svc.match_confirm(match=won, user=opponent)
    drawn = svc.match_report(
        ladder=ladder,
        reporter=opponent,
        sides=[SideInput([opponent], 1), SideInput([player], 1)],
        played_at=at + timedelta(hours=1),
    )
    svc.match_confirm(match=drawn, user=player)
    comment_add(match=drawn, author=player, body="Good game, Zoë's opening.")
    _, secret = token_create(user=player, name="my bot")
    LinkedIdentity.objects.create(user=player, provider="lichess", uid="alice", name="Alice", linked_at=at)
    rating_adjust(
        ladder=ladder,
        player_id=player.pk,
        rating_delta=5.0,
        new_rd=None,
        reason="Lost to a bug.",
        moderator_id=moderator.pk,
    )
    return {"won": won, "drawn": drawn, "secret": secret}


def test_download_my_data_is_one_json_file_with_every_part_and_no_secret(player, opponent, ladder, history):
    client = Client(HTTP_USER_AGENT="Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
    client.post(reverse("accounts:login"), {"username": "alice", "password": PASSWORD})

    response = client.get(EXPORT)

    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith('attachment; filename="ladder-alice-')
    assert "no-store" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]
    data = valid(response.json())
    assert data["profile"]["username"] == "alice"
    [membership] = data["ladders"]
    standing = PlayerRating.objects.get(player=player, ladder=ladder)
    assert (membership["ladder"], membership["rating"], membership["games"]) == ("chess", standing.rating, 2)
    results = {match["id"]: match for match in data["matches"]}
    assert results[history["won"].pk]["result"] == "won" and results[history["drawn"].pk]["result"] == "drew"
    assert results[history["won"].pk]["sides"] == [
        {"index": 0, "placement": 1, "players": ["alice"]},
        {"index": 1, "placement": 2, "players": ["bob"]},
    ]
    assert [row["delta"] for row in data["rating_history"]] == list(
        RatingChange.objects.filter(player=player).order_by("event_id", "pk").values_list("delta", flat=True)
    )
    assert [a["reason"] for a in data["rating_adjustments"]] == ["Lost to a bug."]
    assert [c["body"] for c in data["comments"]] == ["Good game, Zoë's opening."]
    assert {n["kind"] for n in data["notifications"]} >= {"result_awaiting"}
    assert [t["name"] for t in data["api_tokens"]] == ["my bot"]
    assert [s["device"] for s in data["sessions"]] == ["Firefox on Linux"]
    assert {p["kind"] for p in data["sign_in_prints"]} == {"address", "device"}
    assert [(link["provider"], link["name"], link["last_used_at"]) for link in data["linked_accounts"]] == [
        ("lichess", "Alice", None)
    ]
    text = response.content.decode()
    token = ApiToken.objects.get(user=player)
    assert history["secret"] not in text and token.key_hash not in text
    assert "bob@" not in text and opponent.email not in text


def test_the_api_gives_the_same_document_to_a_read_only_token(client_for, player, history):
    web = Client()
    web.force_login(player)

    from_settings = web.get(EXPORT).json()
    from_api = client_for(player, read_only=True).get("/api/v1/me/export/")

    assert from_api.status_code == 200
    document = valid(from_api.json())
    for part in ("profile", "ladders", "matches", "rating_history", "notifications", "comments"):
        assert document[part] == from_settings[part], part


def test_another_players_export_holds_none_of_alices(opponent, history):
    web = Client()
    web.force_login(opponent)

    data = valid(web.get(EXPORT).json())

    assert data["profile"]["username"] == "bob"
    assert data["comments"] == [] and data["api_tokens"] == [] and data["rating_adjustments"] == []
    assert {m["id"] for m in data["matches"]} == {history["won"].pk, history["drawn"].pk}  # bob played both


def test_only_the_signed_in_may_download_and_only_by_get(client, api, player):
    assert client.get(EXPORT).status_code == 302  # to the login page
    assert api.get("/api/v1/me/export/").status_code == 401
    client.force_login(player)
    assert client.post(EXPORT).status_code == 405
    assert valid(client.get(EXPORT).json())["matches"] == []


def test_the_schema_refuses_what_the_export_must_not_hold():
    leaked = {
        "name": "my bot",
        "read_only": False,
        "created_at": "2026-01-01T00:00:00+00:00",
        "last_used_at": None,
        "revoked_at": None,
        "secret": "lad_x",
    }
    validator = Draft202012Validator(SCHEMA["properties"]["api_tokens"]["items"])

    assert not validator.is_valid(leaked)


def test_the_export_names_the_accounts_zone_and_keeps_its_times_in_utc(player, opponent, ladder, history):
    player.time_zone = "Europe/Berlin"
    player.save(update_fields=["time_zone"])
    client = Client()
    client.force_login(player)

    data = valid(client.get(EXPORT).json())

    assert data["profile"]["time_zone"] == "Europe/Berlin"
    times = [data["exported_at"], data["profile"]["date_joined"], *(m["played_at"] for m in data["matches"])]
    assert times and all(value.endswith("+00:00") for value in times)
