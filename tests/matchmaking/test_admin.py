"""The queue's searches and parties in the admin, opened as a moderator (issue 16): read-only records."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from matchmaking import parties
from matchmaking import services as q
from matchmaking.models import Party, QueueEntry
from tests.factories import member

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.ladder(
        name="Widelands",
        slug="widelands",
        allow_teams=True,
        allow_free_for_all=True,
        queue_formats="2v2,4v4,ffa4",
    ),
]


@pytest.fixture
def party(ladder):
    """ann leads a party with bob; cid was invited and declined; they search 2 v 2 and 4 v 4."""
    now = timezone.now()
    ann, bob, cid = member(ladder, "ann"), member(ladder, "bob"), member(ladder, "cid")
    parties.party_invite(ladder=ladder, leader=ann, username="cid", now=now)
    found = parties.current_party(ladder=ladder, player=ann)
    parties.party_answer(party=found, player=cid, accept=False, now=now)
    parties.party_invite(ladder=ladder, leader=ann, username="bob", now=now)
    parties.party_answer(party=found, player=bob, accept=True, now=now)
    q.queue_join(ladder=ladder, player=ann, formats_wanted=["2v2", "4v4"], now=now)
    return found


def test_moderators_may_view_searches_and_parties_but_not_change_them():
    codenames = set(Group.objects.get(name="moderators").permissions.values_list("codename", flat=True))

    assert {"view_queueentry", "view_party", "view_partymember"} <= codenames
    assert not codenames & {"change_party", "delete_party", "change_queueentry", "add_partymember"}


def test_queue_entries_show_formats_by_name_and_the_party(moderator_client, party):
    response = moderator_client.get(reverse("admin:matchmaking_queueentry_changelist"))

    assert response.status_code == 200
    assert "2 v 2, 4 v 4" in response.text
    assert str(party) in response.text


def test_a_queue_entry_page_shows_its_formats(moderator_client, party):
    entry = QueueEntry.objects.get(player__username="bob")

    response = moderator_client.get(reverse("admin:matchmaking_queueentry_change", args=[entry.pk]))

    assert response.status_code == 200
    assert "2 v 2, 4 v 4" in response.text


def test_parties_are_found_by_their_leaders_username(moderator_client, party, ladder):
    other = member(ladder, "dee")
    parties.party_invite(ladder=ladder, leader=other, username="cid")
    url = reverse("admin:matchmaking_party_changelist")

    response = moderator_client.get(url, {"q": "ANN"})

    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    assert list(response.context["cl"].result_list) == [party]


def test_a_party_page_lists_its_members_read_only(moderator_client, party):
    response = moderator_client.get(reverse("admin:matchmaking_party_change", args=[party.pk]))

    assert response.status_code == 200
    text = response.text
    assert "ann" in text and "bob" in text and "cid" in text
    assert "In the party" in text and "Declined" in text
    assert 'name="_save"' not in text
    assert 'name="members-0-status"' not in text  # the inline is a record, not a form


def test_parties_cannot_be_added_in_the_admin(moderator_client, party):
    assert moderator_client.get(reverse("admin:matchmaking_party_add")).status_code == 403
    assert Party.objects.count() == 1
