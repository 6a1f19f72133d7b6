"""The notifications API for bots: list (unread first), filter, mark read; its errors and its schema."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from api.permissions import READ_ONLY_TOKEN
from api.serializers import NOTIFICATION_IDS_OR_ALL, NOTIFICATION_NOTHING, UNKNOWN_FIELD
from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from notifications.models import Kind, Notification
from notifications.services import notify
from tests.api.conftest import error_of

pytestmark = pytest.mark.django_db

LIST = "/api/v1/notifications/"
READ = "/api/v1/notifications/read/"


def tell(user, kind: str = Kind.SEARCH_EXPIRED, *, key: str, minutes_ago: int, read: bool = False) -> int:
    now = timezone.now() - timedelta(minutes=minutes_ago)
    notify(kind, [user.pk], key=key, data={"ladder": "Chess", "ladder_slug": "chess"}, now=now)
    notification = Notification.objects.get(recipient=user, kind=kind, key=key)
    if read:
        Notification.objects.filter(pk=notification.pk).update(read_at=timezone.now())
    return notification.pk


def ids(response) -> list[int]:
    assert response.status_code == 200, response.json()
    return [item["id"] for item in response.json()["results"]]


def unread_ids(user) -> set[int]:
    return set(Notification.objects.filter(recipient=user, read_at__isnull=True).values_list("pk", flat=True))


def test_unread_ones_come_first_then_the_newest(client_for, player):
    old_unread = tell(player, key="search:1", minutes_ago=30)
    new_read = tell(player, key="search:2", minutes_ago=20, read=True)
    newer_unread = tell(player, key="search:3", minutes_ago=10)
    newest_read = tell(player, key="search:4", minutes_ago=1, read=True)

    response = client_for(player).get(LIST)

    assert ids(response) == [newer_unread, old_unread, newest_read, new_read]
    assert response.json()["count"] == 4


def test_an_item_has_the_words_and_links_of_the_site(client_for, ladder, player, opponent):
    match = match_report(
        ladder=ladder,
        reporter=opponent,
        sides=[SideInput([opponent], 1), SideInput([player], 2)],
        played_at=timezone.now() - timedelta(hours=1),
    )

    [item] = client_for(player).get(LIST).json()["results"]

    assert item["kind"] == "result_awaiting" and item["title"] == "A result awaits your answer"
    assert item["text"].startswith("bob reported a loss for you in Chess. Confirm or dispute it by ")
    assert item["url"] == f"http://testserver/ladders/matches/{match.pk}/"
    assert item["ladder"] == "chess" and item["match"] == match.pk and item["read_at"] is None
    assert item["details"]["reporter"] == "bob" and item["details"]["opponents"] == ["bob"]


def test_only_your_own_notifications_are_listed(client_for, player, outsider):
    tell(outsider, key="search:1", minutes_ago=1)

    assert ids(client_for(player).get(LIST)) == []


def test_kind_keeps_one_kind(client_for, player):
    tell(player, Kind.SEARCH_EXPIRED, key="search:1", minutes_ago=3)
    paired = tell(player, Kind.PAIRED, key="match:1", minutes_ago=2)

    assert ids(client_for(player).get(LIST, {"kind": "paired"})) == [paired]


def test_unread_true_keeps_the_unread_ones(client_for, player):
    unread = tell(player, key="search:1", minutes_ago=3)
    tell(player, key="search:2", minutes_ago=2, read=True)
    client = client_for(player)

    assert ids(client.get(LIST, {"unread": "true"})) == [unread]
    assert len(ids(client.get(LIST, {"unread": "false"}))) == 2


def test_pages(client_for, player):
    made = [tell(player, key=f"search:{n}", minutes_ago=n) for n in range(5)]  # made[0] is the newest
    client = client_for(player)

    first = client.get(LIST, {"page_size": 2})
    last = client.get(LIST, {"page_size": 2, "page": 3})

    assert ids(first) == made[:2] and ids(last) == made[4:]
    assert first.json()["count"] == 5 and first.json()["next"].endswith("page=2&page_size=2")
    assert last.json()["next"] is None
    beyond = client.get(LIST, {"page_size": 2, "page": 4})
    assert beyond.status_code == 404 and error_of(beyond)["code"] == "no_such_page"  # not a missing player


def test_no_token_is_401(api, player):
    tell(player, key="search:1", minutes_ago=1)

    for response in (api.get(LIST), api.post(READ, {"all": True}, format="json")):
        assert response.status_code == 401
        assert error_of(response)["code"] == "not_authenticated"
    assert len(unread_ids(player)) == 1


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kind": "birthday"}, "kind"),
        ({"unread": "perhaps"}, "unread"),
        ({"page": "0"}, "page"),
        ({"page_size": "201"}, "page_size"),
        ({"since": "yesterday"}, "since"),
    ],
)
def test_bad_filters_are_400_naming_the_parameter(client_for, player, params, field):
    response = client_for(player).get(LIST, params)

    assert response.status_code == 400
    assert list(error_of(response)["fields"]) == [field]


def test_mark_some_read_skips_other_peoples_ids(client_for, player, outsider):
    first = tell(player, key="search:1", minutes_ago=3)
    second = tell(player, key="search:2", minutes_ago=2)
    theirs = tell(outsider, key="search:1", minutes_ago=1)

    response = client_for(player).post(READ, {"ids": [first, theirs, 999_999]}, format="json")

    assert response.status_code == 200
    assert response.json() == {"marked": 1, "unread": 1}
    assert unread_ids(player) == {second}
    assert unread_ids(outsider) == {theirs}


def test_mark_all_read(client_for, player, outsider):
    for n in range(3):
        tell(player, key=f"search:{n}", minutes_ago=n)
    theirs = tell(outsider, key="search:1", minutes_ago=1)
    client = client_for(player)

    assert client.post(READ, {"all": True}, format="json").json() == {"marked": 3, "unread": 0}
    assert client.post(READ, {"all": True}, format="json").json() == {"marked": 0, "unread": 0}
    assert unread_ids(outsider) == {theirs}


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"ids": [1], "all": True}, "all", NOTIFICATION_IDS_OR_ALL),
        ({}, "ids", NOTIFICATION_NOTHING),
        ({"all": False}, "ids", NOTIFICATION_NOTHING),
        ({"ids": [1], "everything": True}, "everything", UNKNOWN_FIELD),
        ({"ids": list(range(1, 202))}, "ids", None),
        ({"ids": []}, "ids", None),
        ({"ids": ["one"]}, "ids", None),
        ({"ids": 3}, "ids", None),
    ],
)
def test_bad_read_bodies_are_400_naming_the_field(client_for, player, body, field, message):
    tell(player, key="search:1", minutes_ago=1)

    response = client_for(player).post(READ, body, format="json")

    assert response.status_code == 400
    fields = error_of(response)["fields"]
    [named] = fields
    assert named == field or named.startswith(f"{field}.")  # "ids.0": the first id
    if message:
        assert fields[field] == [message]
    assert len(unread_ids(player)) == 1


def test_200_ids_are_allowed(client_for, player):
    mine = tell(player, key="search:1", minutes_ago=1)

    response = client_for(player).post(READ, {"ids": [mine, *range(10**6, 10**6 + 199)]}, format="json")

    assert response.status_code == 200 and response.json() == {"marked": 1, "unread": 0}


def test_a_read_only_token_lists_but_may_not_mark_read_as_with_every_write(client_for, player):
    # TokenScope refuses every write to a read-only token; marking read changes only the
    # reader's own view, but it is a write all the same (a read-only token is for dashboards).
    mine = tell(player, key="search:1", minutes_ago=1)
    client = client_for(player, read_only=True)

    assert ids(client.get(LIST)) == [mine]
    response = client.post(READ, {"ids": [mine]}, format="json")

    assert response.status_code == 403
    assert error_of(response) == {"code": "read_only_token", "message": READ_ONLY_TOKEN, "fields": {}}
    assert unread_ids(player) == {mine}


def test_the_schema_lists_both_operations_with_their_errors(api):
    paths = api.get("/api/v1/schema/").json()["paths"]

    listing = paths[LIST]["get"]
    assert listing["operationId"] == "notifications_list"
    assert {"200", "400", "401", "404", "429"} <= set(listing["responses"])
    parameters = {p["name"]: p for p in listing["parameters"]}
    assert {"kind", "unread", "page", "page_size"} <= set(parameters)
    assert set(parameters["kind"]["schema"]["enum"]) == set(Kind.values)

    marking = paths[READ]["post"]
    assert marking["operationId"] == "notifications_read"
    assert {"200", "400", "401", "403", "429"} <= set(marking["responses"])
    body = marking["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/NotificationReadInRequest")
    assert "post" not in paths[LIST] and "get" not in paths[READ]
