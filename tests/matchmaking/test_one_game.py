"""One game at a time (docs/rules.md §13): nobody searches a ladder while a game of theirs in it
is still to be played, nor does their party; pairing never places such a search; the panels of
a party's members and of a paired player follow without a reload.

The service rules run both ways the queue writes: PostgreSQL's statements and their ORM twins.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone

from core import db
from ladder.matches.reporting import match_report_result
from ladder.models import Match, MatchStatus
from matchmaking import lifecycle, parties, store
from matchmaking import services as q
from matchmaking.models import EntryStatus, QueueEntry
from tests.api.conftest import error_of
from tests.factories import LadderFactory, member

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def pair(ladder, a, b, now) -> Match:
    q.queue_join(ladder=ladder, player=a, now=now)
    entry = q.queue_join(ladder=ladder, player=b, now=now)
    assert entry.status == EntryStatus.MATCHED
    return Match.objects.get(pk=entry.match_id)


def refusal(call) -> ValidationError:
    with pytest.raises(ValidationError) as refused:
        call()
    return refused.value


@pytest.mark.parametrize("state", ["ready_check", "scheduled", "claimed"])
def test_a_player_with_an_open_game_cannot_search_the_ladder_again(sql_or_orm, ladder, player, opponent, state):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    if state != "ready_check":
        lifecycle.ready(match=match, user=player, now=now)
        lifecycle.ready(match=match, user=opponent, now=now)
    if state == "claimed":
        lifecycle.claim_no_show(match=match, user=opponent, now=now)
    match.refresh_from_db()
    assert match.status == state

    refused = refusal(lambda: q.queue_join(ladder=ladder, player=player, now=now + timedelta(seconds=1)))

    assert refused.code == "in_game"
    assert match.get_absolute_url() in refused.messages[0]
    assert "still in a game in" in refused.messages[0]
    assert QueueEntry.objects.filter(player=player).count() == 1  # no search written


def test_a_result_or_a_cancel_ends_the_game_and_searching_is_open_again(sql_or_orm, ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    lifecycle.ready(match=match, user=player, now=now)
    lifecycle.ready(match=match, user=opponent, now=now)
    match_report_result(match=match, reporter=player, placements=[1, 2], now=now + timedelta(minutes=5))
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING  # played, awaiting confirmation: it holds nobody

    again = q.queue_join(ladder=ladder, player=player, now=now + timedelta(minutes=6))

    assert again.status == EntryStatus.WAITING


def test_a_game_in_another_ladder_does_not_hold_the_player(sql_or_orm, ladder, player, opponent):
    now = timezone.now()
    pair(ladder, player, opponent, now)
    other = LadderFactory(name="Other")
    member_of_other = member(other, "olga")
    from ladder.membership import ladder_join

    ladder_join(ladder=other, player=player, now=now - timedelta(days=1))

    assert q.queue_join(ladder=other, player=player, now=now).status == EntryStatus.WAITING
    assert member_of_other.pk  # another member, so the ladder has someone to pair with later


@pytest.fixture
def team_ladder():
    return LadderFactory(name="Teams", allow_teams=True, queue_formats="1v1,2v2", rematch_cooldown_minutes=0)


def test_a_party_cannot_search_while_a_member_is_in_a_game(sql_or_orm, team_ladder):
    now = timezone.now()
    ash, misty, brock, gary = (member(team_ladder, name) for name in ("ash", "misty", "brock", "gary"))
    match = pair(team_ladder, misty, brock, now)
    parties.party_invite(ladder=team_ladder, leader=ash, username="misty", now=now)
    party = parties.current_party(ladder=team_ladder, player=ash)
    parties.party_answer(party=party, player=misty, accept=True, now=now)

    refused = refusal(lambda: q.queue_join(ladder=team_ladder, player=ash, formats_wanted=["2v2"], now=now))

    assert refused.code == "in_game"
    assert refused.messages[0].startswith("misty is still in a game in Teams: your party can search once it is over.")
    assert match.get_absolute_url() in refused.messages[0]
    assert not QueueEntry.objects.filter(player=ash).exists()
    assert gary.pk


def test_pairing_never_places_a_search_whose_player_has_an_open_game(sql_or_orm, ladder, player, opponent, outsider):
    """A search written while its player's previous one was being placed elsewhere (the join's check
    raced it): the claim, under the pairing's lock, leaves it out."""
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    from ladder.membership import ladder_join

    ladder_join(ladder=ladder, player=outsider, now=now - timedelta(days=1))
    slipped = QueueEntry.objects.create(
        ladder=ladder, player=player, status=EntryStatus.WAITING, rating=1500, rd=60, volatility=0.06,
        rd_as_of=now, joined_at=now, last_seen_at=now,
    )  # fmt: skip

    with transaction.atomic():
        assert store.claim(slipped.pk) == set()
    entry = q.queue_join(ladder=ladder, player=outsider, now=now + timedelta(seconds=1))

    assert entry.status == EntryStatus.WAITING, "the outsider is not paired with a player in a game"
    assert Match.objects.filter(participants__player=player).get() == match


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not db.on_postgresql(), reason="the race is between two server connections")
def test_a_join_racing_the_pairing_of_the_previous_search_ends_its_search():
    """The player's previous search is being placed in another connection while they search again:
    the join waits for that pairing, then finds its game and ends the search it wrote."""
    ladder = LadderFactory(name="Race", rematch_cooldown_minutes=0)
    alice, bob = member(ladder, "alice"), member(ladder, "bob")
    now = timezone.now()
    waiting = q.queue_join(ladder=ladder, player=alice, now=now)
    locked, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def place_elsewhere() -> None:
        try:
            with transaction.atomic():
                assert store.claim(waiting.pk) == {waiting.pk}
                match = Match.objects.create(ladder=ladder, played_at=now, paired_by_queue=True, queue_format="1v1")
                match.status = MatchStatus.READY_CHECK
                match.save(update_fields=["status"])
                side = match.sides.create(index=0, win_probability=0.5)
                other = match.sides.create(index=1, win_probability=0.5)
                match.participants.create(side=side, player=alice)
                match.participants.create(side=other, player=bob)
                QueueEntry.objects.filter(pk=waiting.pk).update(status=EntryStatus.MATCHED, match=match, ended_at=now)
                locked.set()
                release.wait(10)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=place_elsewhere)
    thread.start()
    assert locked.wait(10)
    threading.Timer(0.5, release.set).start()
    started = time.monotonic()
    refused = refusal(lambda: q.queue_join(ladder=ladder, player=alice, now=now + timedelta(seconds=1)))
    thread.join()

    assert not errors, errors
    assert time.monotonic() - started >= 0.4, "the join waited for the pairing"
    assert refused.code == "in_game"
    assert not QueueEntry.objects.filter(player=alice, status=EntryStatus.WAITING).exists()


# -- The panels ----------------------------------------------------------------------------------------


def test_a_paired_panel_offers_no_new_search_and_watches_until_the_game_ends(client, ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    lifecycle.ready(match=match, user=player, now=now)
    lifecycle.ready(match=match, user=opponent, now=now)
    client.force_login(player)
    status = reverse("matchmaking:status", args=[ladder.slug])

    page = client.get(status).content.decode()
    assert "Go to the match" in page and "Search again" not in page and "Find a match</button>" not in page
    assert "One game at a time" in page
    shown = page.split(f"{status}?shown=")[1].split('"')[0]
    assert shown.startswith("i")

    assert client.get(status, {"shown": shown}, **HTMX).status_code == 204  # nothing changed: no swap

    match_report_result(match=match, reporter=opponent, placements=[1, 2], now=now + timedelta(minutes=3))
    changed = client.get(status, {"shown": shown}, **HTMX)
    assert changed.status_code in (200, 286)
    assert changed["HX-Retarget"] == "#queue-body"
    assert "Find a match" in changed.content.decode()


def test_a_party_members_panel_follows_the_search_the_leader_starts(client, team_ladder):
    now = timezone.now()
    ash, misty = member(team_ladder, "ash"), member(team_ladder, "misty")
    parties.party_invite(ladder=team_ladder, leader=ash, username="misty", now=now)
    party = parties.current_party(ladder=team_ladder, player=ash)
    parties.party_answer(party=party, player=misty, accept=True, now=now)
    client.force_login(misty)
    status = reverse("matchmaking:status", args=[team_ladder.slug])
    page = client.get(team_ladder.get_absolute_url()).content.decode()
    assert 'id="queue-watch"' in page
    shown = page.split(f"{status}?shown=")[1].split('"')[0]
    assert client.get(status, {"shown": shown}, **HTMX).status_code == 204

    q.queue_join(ladder=team_ladder, player=ash, formats_wanted=["2v2"])

    changed = client.get(status, {"shown": shown}, **HTMX)
    assert changed["HX-Retarget"] == "#queue-body"
    body = changed.content.decode()
    assert "Searching for a game" in body and "party of 2" in body


def test_a_lone_idle_player_does_not_watch(client, ladder, player):
    client.force_login(player)
    page = client.get(ladder.get_absolute_url()).content.decode()
    assert "Find a match" in page and 'id="queue-watch"' not in page


def test_the_party_box_shows_an_invitation_when_it_arrives(client, team_ladder):
    now = timezone.now()
    ash, misty = member(team_ladder, "ash"), member(team_ladder, "misty")
    client.force_login(misty)
    page = client.get(team_ladder.get_absolute_url()).content.decode()
    url = reverse("matchmaking:party_status", args=[team_ladder.slug])
    seen = page.split(f"{url}?seen=")[1].split('"')[0]
    assert client.get(url, {"seen": seen}, **HTMX).status_code == 204

    parties.party_invite(ladder=team_ladder, leader=ash, username="misty", now=now)

    box = client.get(url, {"seen": seen}, **HTMX)
    assert box.status_code == 200
    assert "invites you to their party" in box.content.decode()
    new_seen = box.content.decode().split(f"{url}?seen=")[1].split('"')[0]
    assert new_seen != seen
    assert client.get(url, {"seen": new_seen}, **HTMX).status_code == 204


def test_the_leader_sees_an_invitation_accepted(client, team_ladder):
    now = timezone.now()
    ash, misty = member(team_ladder, "ash"), member(team_ladder, "misty")
    parties.party_invite(ladder=team_ladder, leader=ash, username="misty", now=now)
    client.force_login(ash)
    page = client.get(team_ladder.get_absolute_url()).content.decode()
    url = reverse("matchmaking:party_status", args=[team_ladder.slug])
    seen = page.split(f"{url}?seen=")[1].split('"')[0]
    assert "invited" in page

    party = parties.current_party(ladder=team_ladder, player=ash)
    parties.party_answer(party=party, player=misty, accept=True, now=now)

    box = client.get(url, {"seen": seen}, **HTMX).content.decode()
    assert "misty" in box and 'status-pending">invited' not in box


def test_the_api_refuses_a_second_search_with_in_game(ladder, player, opponent, client_for):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    api = client_for(player)

    response = api.post(f"/api/v1/ladders/{ladder.slug}/queue/", {}, format="json")

    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "in_game" and match.get_absolute_url() in error["message"]


def test_the_panel_refuses_a_stale_find_a_match_and_links_the_game(client, ladder, player, opponent):
    """A tab opened before the pairing still offers the button: pressing it says why not and links the game."""
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    client.force_login(player)

    body = client.post(reverse("matchmaking:join", args=[ladder.slug]), **HTMX).content.decode()

    assert "You are still in a game in Chess: play and report it, or cancel it, before searching again." in body
    assert f'<a href="{match.get_absolute_url()}">Open that game</a>' in body
    assert "Your game:" not in body
    assert QueueEntry.objects.filter(player=player).count() == 1
