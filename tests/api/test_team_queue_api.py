"""Team and free-for-all searches, and parties, through the API (docs/api.md, "Teams, free-for-all and parties")."""

from __future__ import annotations

import pytest
from django.utils import timezone

from ladder.formats import FORMATS
from matchmaking import parties
from matchmaking.models import Block, EntryStatus, QueueEntry
from ratings.models import PlayerRating
from tests.factories import member, team_queue_ladder

pytestmark = [
    pytest.mark.django_db,
    team_queue_ladder("1v1,2v2,ffa4"),
]

QUEUE = "/api/v1/ladders/widelands/queue/"
PARTY = "/api/v1/ladders/widelands/party/"
INVITE = PARTY + "invitations/"


def rated(ladder, name, rating=1500.0):
    """An established member (RD 60: not provisional, so not kept apart as a newcomer)."""
    user = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=user).update(rating=rating, rd=60.0, rd_as_of=timezone.now())
    return user


def error(response, status):
    assert response.status_code == status, response.content
    return response.json()["error"]


# Joining with formats ------------------------------------------------------------------------


def test_a_join_without_formats_searches_one_v_one_as_before(client_for, ladder):
    body = client_for(rated(ladder, "ann")).post(QUEUE, {}, format="json").json()
    assert body["status"] == "waiting" and body["formats"] == ["1v1"]
    assert body["searching_by_format"] == {"1v1": 1, "2v2": 0, "ffa4": 0}
    assert body["found"] == {} and body["sides"] == [] and body["queue_format"] is None and body["party"] is None


def test_a_join_with_formats_searches_them_and_counts_what_was_found(client_for, ladder):
    rated(ladder, "bob")
    client_for(rated(ladder, "bob2")).post(QUEUE, {"formats": ["2v2"]}, format="json")
    response = client_for(rated(ladder, "ann")).post(QUEUE, {"formats": ["ffa4", "2v2"]}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["formats"] == ["2v2", "ffa4"]  # in the formats' order
    assert body["searching_by_format"] == {"1v1": 0, "2v2": 2, "ffa4": 1}
    assert body["found"] == {"2v2": 2, "ffa4": 1}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"formats": ["3v3"]}, "bad_format"),  # a format, not offered here
        ({"formats": ["5v5"]}, "invalid_choice"),  # not a format at all
        ({"formats": []}, "min_length"),
        ({"formats": ["2v2", "2v2"]}, "repeated_format"),
        ({"formats": "2v2"}, "not_a_list"),
        ({"party": 0}, "min_value"),
        ({"formats": ["2v2"], "teams": 2}, "unknown_field"),
    ],
)
def test_bad_formats_are_a_400_naming_the_field(client_for, ladder, body, code):
    found = error(client_for(rated(ladder, "ann")).post(QUEUE, body, format="json"), 400)
    assert found["code"] == code
    assert set(found["fields"]) == set(body) - {"formats"} if code == "unknown_field" else set(body)
    assert not QueueEntry.objects.exists()


def test_a_party_larger_than_a_side_is_a_400_naming_formats(client_for, ladder):
    ann, bob = rated(ladder, "ann"), rated(ladder, "bob")
    parties.party_answer(
        party=parties.party_invite(ladder=ladder, leader=ann, username="bob").party, player=bob, accept=True
    )
    found = error(client_for(ann).post(QUEUE, {"formats": ["ffa4"]}, format="json"), 400)
    assert found["code"] == "party_too_large" and set(found["fields"]) == {"formats"}


def test_searching_twice_and_someone_elses_party_are_conflicts(client_for, ladder):
    ann, bob, cid = rated(ladder, "ann"), rated(ladder, "bob"), rated(ladder, "cid")
    place = parties.party_invite(ladder=ladder, leader=bob, username="cid")
    parties.party_answer(party=place.party, player=cid, accept=True)
    client = client_for(ann)
    assert error(client.post(QUEUE, {"party": place.party_id}, format="json"), 409)["code"] == "not_in_party"
    assert client.post(QUEUE, {"formats": ["2v2"]}, format="json").status_code == 201
    assert error(client.post(QUEUE, {"formats": ["2v2"]}, format="json"), 409)["code"] == "already_searching"


def test_a_party_member_joins_for_the_whole_party(client_for, ladder):
    ann, bob = rated(ladder, "ann"), rated(ladder, "bob")
    place = parties.party_invite(ladder=ladder, leader=ann, username="bob")
    parties.party_answer(party=place.party, player=bob, accept=True)
    body = client_for(bob).post(QUEUE, {"formats": ["2v2"], "party": place.party_id}, format="json").json()
    assert body["party"] == place.party_id and body["found"] == {"2v2": 2}
    assert QueueEntry.objects.filter(party=place.party, status=EntryStatus.WAITING).count() == 2
    assert client_for(ann).get(PARTY).json()["party"]["searching"] is True


# A 2 v 2 formed through four clients ------------------------------------------------------------


def test_four_clients_searching_two_v_two_all_see_the_same_match_and_teams(client_for, ladder):
    ratings = {"ann": 1900.0, "bob": 1500.0, "cid": 1650.0, "dee": 1720.0}
    clients = {name: client_for(rated(ladder, name, rating)) for name, rating in ratings.items()}
    for name in ("ann", "bob", "cid"):
        assert clients[name].post(QUEUE, {"formats": ["2v2", "ffa4"]}, format="json").json()["status"] == "waiting"
    last = clients["dee"].post(QUEUE, {"formats": ["2v2"]}, format="json").json()
    assert last["status"] == "matched"

    polls = {name: client.get(QUEUE).json() for name, client in clients.items()}

    assert {poll["match"] for poll in polls.values()} == {last["match"]}
    assert {poll["queue_format"] for poll in polls.values()} == {"2v2"}
    teams = [[(p["username"], side["win_probability"]) for p in side["players"]] for side in last["sides"]]
    for name, poll in polls.items():
        assert poll["match_status"] == "ready_check" and poll["ready"] is False and poll["opponent"] is None
        assert [[(p["username"], side["win_probability"]) for p in side["players"]] for side in poll["sides"]] == teams
        (mine,) = [side for side in poll["sides"] if side["mine"]]
        assert name in [p["username"] for p in mine["players"]]
        assert poll["win_probability"] == mine["win_probability"]
    assert sorted(len(side) for side in teams) == [2, 2]
    assert sum(side["win_probability"] for side in last["sides"]) == pytest.approx(1.0)
    assert {tuple(sorted(name for name, _ in side)) for side in teams} == {("ann", "bob"), ("cid", "dee")}

    match = clients["ann"].get(f"/api/v1/matches/{last['match']}/").json()
    assert match["queue_format"] == "2v2"
    assert [side["win_probability"] for side in match["sides"]] == [side["win_probability"] for side in last["sides"]]
    clients["ann"].post(f"/api/v1/matches/{last['match']}/ready/", {}, format="json")
    assert clients["ann"].get(QUEUE).json()["ready"] is True
    assert clients["cid"].get(QUEUE).json()["ready"] is False  # the other team's


def test_a_reported_match_has_no_queue_format_nor_predictions(client_for, ladder, player, opponent):
    sides = [{"players": [player.username], "placement": 1}, {"players": [opponent.username], "placement": 2}]
    match = client_for(player).post("/api/v1/matches/", {"ladder": ladder.slug, "sides": sides}, format="json").json()
    assert match["queue_format"] is None and [side["win_probability"] for side in match["sides"]] == [None, None]


# Parties -----------------------------------------------------------------------------------


def test_invite_accept_decline_withdraw_and_leave(client_for, ladder):
    ann, bob, cid, dee = (client_for(rated(ladder, name)) for name in ("ann", "bob", "cid", "dee"))
    assert ann.get(PARTY).json() == {"ladder": "widelands", "max_size": 2, "party": None, "invitations": []}

    created = ann.post(INVITE, {"username": "BOB"}, format="json")
    assert created.status_code == 201
    party = created.json()["party"]
    assert [m["username"] for m in party["members"]] == ["ann"]
    assert [i["player"]["username"] for i in party["invited"]] == ["bob"] and party["searching"] is False

    (invitation,) = bob.get(PARTY).json()["invitations"]
    assert invitation["party"] == party["id"] and invitation["leader"]["username"] == "ann"
    accepted = bob.post(f"{INVITE}{party['id']}/accept/", {}, format="json").json()
    assert [m["username"] for m in accepted["party"]["members"]] == ["ann", "bob"] and accepted["invitations"] == []

    assert error(ann.post(INVITE, {"username": "cid"}, format="json"), 400)["code"] == "party_too_large"
    assert error(bob.post(INVITE, {"username": "cid"}, format="json"), 403)["code"] == "not_leader"
    assert error(cid.post(f"{INVITE}{party['id']}/decline/", {}, format="json"), 409)["code"] == "no_invitation"

    left = bob.post(PARTY + "leave/", {}, format="json").json()
    assert left["party"] is None
    assert [m["username"] for m in ann.get(PARTY).json()["party"]["members"]] == ["ann"]

    ann.post(INVITE, {"username": "cid"}, format="json")
    declined = cid.post(f"{INVITE}{party['id']}/decline/", {}, format="json").json()
    assert declined["party"] is None and declined["invitations"] == []
    ann.post(INVITE, {"username": "dee"}, format="json")
    withdrawn = ann.delete(f"{INVITE}dee/").json()
    assert withdrawn["party"]["invited"] == []
    assert dee.get(PARTY).json()["invitations"] == []
    assert error(ann.delete(f"{INVITE}dee/"), 409)["code"] == "no_invitation"

    assert ann.post(PARTY + "leave/", {}, format="json").json()["party"] is None
    assert error(ann.post(PARTY + "leave/", {}, format="json"), 409)["code"] == "not_in_party"
    assert error(ann.delete(f"{INVITE}dee/"), 409)["code"] == "not_in_party"


def test_every_invitation_refusal_has_its_code_and_status(client_for, ladder, outsider):
    ann_user = rated(ladder, "ann")
    ann, cid, dan = client_for(ann_user), client_for(rated(ladder, "cid")), client_for(rated(ladder, "dan"))
    rated(ladder, "bob")
    Block.objects.create(blocker=rated(ladder, "eve"), blocked=ann_user)
    for username, code in (
        ("nobody", "no_such_player"),
        (outsider.username, "not_member"),
        ("ann", "self_invite"),
        ("eve", "blocked"),
    ):
        found = error(ann.post(INVITE, {"username": username}, format="json"), 400)
        assert found["code"] == code and set(found["fields"]) == {"username"}, username
    ann.post(INVITE, {"username": "bob"}, format="json")
    assert error(ann.post(INVITE, {"username": "bob"}, format="json"), 409)["code"] == "already_invited"

    cid.post(INVITE, {"username": "dan"}, format="json")
    (invitation,) = dan.get(PARTY).json()["invitations"]
    dan.post(f"{INVITE}{invitation['party']}/accept/", {}, format="json")
    assert error(ann.post(INVITE, {"username": "dan"}, format="json"), 409)["code"] == "in_a_party"

    fay, bob = client_for(rated(ladder, "fay")), client_for(type(ann_user).objects.get(username="bob"))
    fay.post(INVITE, {"username": "bob"}, format="json")  # bob is invited by ann and by fay
    ann_invitation, fay_invitation = (row["party"] for row in reversed(bob.get(PARTY).json()["invitations"]))
    assert bob.post(f"{INVITE}{fay_invitation}/accept/", {}, format="json").status_code == 200
    assert error(bob.post(f"{INVITE}{ann_invitation}/accept/", {}, format="json"), 409)["code"] == "in_a_party"


@pytest.mark.ladder(slug="widelands", allow_teams=True, queue_formats="2v2,3v3", queue_min_win_probability=0.05)
def test_a_searching_party_cannot_change(client_for, ladder):
    ann, bob, cid = (client_for(rated(ladder, name)) for name in ("ann", "bob", "cid"))
    rated(ladder, "dee")
    party = ann.post(INVITE, {"username": "bob"}, format="json").json()["party"]
    bob.post(f"{INVITE}{party['id']}/accept/", {}, format="json")
    ann.post(INVITE, {"username": "cid"}, format="json")
    assert ann.post(QUEUE, {"formats": ["3v3"]}, format="json").json()["status"] == "waiting"
    assert error(cid.post(f"{INVITE}{party['id']}/accept/", {}, format="json"), 409)["code"] == "party_searching"
    assert error(ann.post(INVITE, {"username": "dee"}, format="json"), 409)["code"] == "party_searching"
    assert error(bob.post(QUEUE, {"formats": ["2v2"]}, format="json"), 409)["code"] == "already_searching"


@pytest.mark.ladder(queue_formats="1v1")
def test_a_ladder_without_team_formats_has_no_parties(client_for, ladder):
    rated(ladder, "bob")
    client = client_for(rated(ladder, "ann"))
    assert client.get(f"/api/v1/ladders/{ladder.slug}/party/").json()["max_size"] == 1
    found = error(
        client.post(f"/api/v1/ladders/{ladder.slug}/party/invitations/", {"username": "bob"}, format="json"), 400
    )
    assert found["code"] == "no_team_formats"


def test_party_endpoints_need_a_token_and_a_known_ladder(api, client_for, ladder, player):
    assert error(api.get(PARTY), 401)["code"] == "not_authenticated"
    assert error(client_for(player, read_only=True).post(PARTY + "leave/", {}, format="json"), 403)
    assert client_for(player, read_only=True).get(PARTY).status_code == 200
    assert error(client_for(player).get("/api/v1/ladders/nope/party/"), 404)["code"] == "not_found"
    assert error(client_for(player).post(f"{INVITE}999999/accept/", {}, format="json"), 404)["code"] == "not_found"


# The schema --------------------------------------------------------------------------------


def test_the_schema_shows_formats_parties_and_predictions(api):
    schema = api.get("/api/v1/schema/").json()
    components = schema["components"]["schemas"]
    join = components["QueueJoinInRequest"]
    assert join["additionalProperties"] is False
    assert join["properties"]["formats"] == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/QueueFormatEnum"},
        "minItems": 1,
        "maxItems": len(FORMATS),
        "uniqueItems": True,
        "description": join["properties"]["formats"]["description"],
    }
    assert components["QueueFormatEnum"]["enum"] == list(FORMATS)
    assert join["properties"]["party"]["minimum"] == 1 and "required" not in join
    assert {"formats", "searching_by_format", "found", "queue_format", "sides", "party"} <= set(
        components["QueueOut"]["properties"]
    )
    assert components["QueueSideOut"]["properties"]["win_probability"]["nullable"] is True
    assert components["MatchSideOut"]["properties"]["win_probability"]["nullable"] is True
    assert "queue_format" in components["MatchOut"]["required"]
    assert components["PartyInviteInRequest"]["additionalProperties"] is False
    paths = schema["paths"]
    assert set(paths["/api/v1/ladders/{slug}/party/invitations/{party_id}/accept/"]["post"]["responses"]) >= {
        "200",
        "404",
        "409",
    }
    assert {} not in paths["/api/v1/ladders/{slug}/party/"]["get"]["security"]
    assert "delete" in paths["/api/v1/ladders/{slug}/party/invitations/{username}/"]
