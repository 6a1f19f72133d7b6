"""The team and free-for-all queue through its pages: the formats to tick, the counts while
searching, the formed teams with their chances, the party box, and the match page's prediction."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from ladder import formats
from ladder.models import Match, MatchSide, Participant
from matchmaking import parties
from matchmaking.models import EntryStatus, PartyMember, PartyStatus, QueueEntry
from matchmaking.views_party import ACCEPTED, DECLINED, LEFT, WITHDRAWN
from ratings.models import PlayerRating
from tests.factories import LadderFactory, member, team_queue_ladder

pytestmark = [
    pytest.mark.django_db,
    team_queue_ladder("1v1,2v2,ffa4"),
]
HTMX = {"HTTP_HX_REQUEST": "true"}


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def rated(ladder, name, rating):
    user = member(ladder, name)
    PlayerRating.objects.filter(ladder=ladder, player=user).update(rating=rating, rd=60.0, rd_as_of=timezone.now())
    return user


def join(client, codes, **extra):
    data = {"formats": codes, "formats_shown": "1"}
    return client.post(reverse("matchmaking:join", args=["widelands"]), data, **extra)


def boxes(html):
    """The format checkboxes of a page: code → ticked."""
    found = re.findall(r'<input type="checkbox" name="formats" value="([^"]+)"( checked)?>', html)
    return {code: bool(ticked) for code, ticked in found}


def test_join_form_offers_the_ladders_formats_with_one_v_one_ticked(ladder, player):
    page = signed_in(player).get(ladder.get_absolute_url())

    assert boxes(page.text) == {"1v1": True, "2v2": False, "ffa4": False}
    assert "free-for-all of 4" in page.text and "Games to search for" in page.text
    assert "comes later" not in page.text


def test_a_one_v_one_ladder_shows_no_checkboxes_and_no_party(client, player):
    chess = LadderFactory(name="Chess", slug="chess")
    member(chess, "zed")
    page = signed_in(player).get(chess.get_absolute_url())
    assert boxes(page.text) == {}

    page = signed_in(member(chess, "yan")).get(chess.get_absolute_url())

    assert 'id="queue-panel"' in page.text and 'id="party-box"' not in page.text


def test_join_searches_the_ticked_formats_and_counts_the_others_per_format(ladder):
    join(signed_in(rated(ladder, "ben", 1500)), ["2v2"], **HTMX)
    join(signed_in(rated(ladder, "cid", 1500)), ["ffa4", "2v2"], **HTMX)
    ann = rated(ladder, "ann", 1500)

    response = join(signed_in(ann), ["2v2", "ffa4"], **HTMX)

    entry = QueueEntry.objects.get(player=ann)
    assert entry.formats == formats.mask(["2v2", "ffa4"])
    assert "Searching for a game" in response.text and "Players rated" in response.text
    assert (
        '0 in 1 v 1</span> · <span class="nowrap">2 in 2 v 2</span> · <span class="nowrap">1 in free-for-all of 4'
        in response.text
    )
    assert "Your 2 v 2</dt><dd>3 of 4 found" in response.text
    assert "Your free-for-all of 4</dt><dd>2 of 4 found" in response.text


def test_nothing_ticked_is_refused_in_the_panel(ladder, player):
    response = join(signed_in(player), [], **HTMX)

    assert "Choose at least one format to search for." in response.text
    assert not QueueEntry.objects.exists()


def test_a_refused_join_keeps_what_was_ticked(ladder, player):
    response = join(signed_in(player), ["2v2", "nonsense"], **HTMX)

    assert "Choose the formats from the list." in response.text
    assert boxes(response.text) == {"1v1": False, "2v2": True, "ffa4": False}


def test_search_again_remembers_the_last_choice(ladder, player):
    client = signed_in(player)
    join(client, ["2v2", "ffa4"], **HTMX)

    left = client.post(reverse("matchmaking:leave", args=["widelands"]), **HTMX)

    assert "You left the queue." in left.text
    assert boxes(left.text) == {"1v1": False, "2v2": True, "ffa4": True}


def test_a_formed_two_v_two_shows_the_teams_their_chances_and_who_is_ready(ladder):
    clients = {
        name: signed_in(rated(ladder, name, rating))
        for name, rating in [("ann", 1800), ("ben", 1500), ("cat", 1650), ("dan", 1700)]
    }
    for name in ("ann", "ben", "cat"):
        join(clients[name], ["2v2"], **HTMX)

    formed = join(clients["dan"], ["2v2"], **HTMX)

    assert formed.status_code == 286
    match = QueueEntry.objects.get(player__username="dan").match
    sides = list(MatchSide.objects.filter(match=match).order_by("index"))
    assert "Your game is formed (2 v 2)" in formed.text
    assert "Team 1" in formed.text and "Team 2" in formed.text and "(yours)" in formed.text
    for side in sides:
        assert f"Predicted: {round(side.win_probability * 100)}% to win" in formed.text
    assert "closest to 50%" in formed.text
    assert formed.text.count("Not yet") == 4 and match.get_absolute_url() in formed.text

    # One player pressed Ready: their teammate is not ready for it (Participant.ready_at, per player).
    Participant.objects.filter(match=match, player__username="ann").update(ready_at=timezone.now())
    shown = re.search(r"shown=(r[0-9-]+)", formed.text).group(1)
    poll = clients["dan"].get(reverse("matchmaking:status", args=["widelands"]), {"shown": shown}, **HTMX)
    assert 'id="queue-body"' not in poll.text  # the same state: the status alone, with the teams
    assert poll.text.count("Not yet") == 3 and poll.text.count(">Ready</span>") == 1

    for name in ("ben", "cat", "dan"):
        clients[name].post(reverse("matchmaking:ready", args=[match.pk]), {"from": "queue"}, **HTMX)
    poll = clients["dan"].get(reverse("matchmaking:status", args=["widelands"]), {"shown": shown}, **HTMX)

    assert poll.status_code == 286
    assert "Everyone is ready: play your game (2 v 2) now." in poll.text
    assert "Go to the match" in poll.text and "Search again" not in poll.text  # one game at a time
    assert "One game at a time" in poll.text and "shown=i" in poll.text  # it watches for the game to end


def test_a_formed_free_for_all_shows_each_players_chance(ladder):
    clients = {
        name: signed_in(rated(ladder, name, 1500 + 30 * n)) for n, name in enumerate(["ann", "ben", "cat", "dan"])
    }
    for name in ("ann", "ben", "cat"):
        join(clients[name], ["ffa4"], **HTMX)

    formed = join(clients["dan"], ["ffa4"], **HTMX)

    match = QueueEntry.objects.get(player__username="dan").match
    assert "Your game is formed (free-for-all of 4)" in formed.text and 'aria-label="Players"' in formed.text
    for side in MatchSide.objects.filter(match=match):
        assert f"Predicted: {round(side.win_probability * 100)}% against each other" in formed.text
    assert "mean chance to beat each other player" in formed.text and "<strong>You</strong>" in formed.text


def test_the_match_page_shows_each_sides_predicted_chance(ladder):
    clients = [signed_in(rated(ladder, name, 1500 + 40 * n)) for n, name in enumerate(["ann", "ben", "cat", "dan"])]
    for client in clients:
        join(client, ["2v2"])
    match = QueueEntry.objects.get(player__username="dan").match

    page = clients[0].get(match.get_absolute_url())

    for side in MatchSide.objects.filter(match=match):
        assert f"Predicted: {round(side.win_probability * 100)}% to win" in page.text
    assert "each side's chance to win when the queue formed the game" in page.text


def test_a_reported_match_shows_no_prediction(ladder, player, opponent):
    from ladder.matches.checks import SideInput
    from ladder.matches.reporting import match_report

    match = match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])

    assert "Predicted:" not in signed_in(player).get(match.get_absolute_url()).text


# Parties -----------------------------------------------------------------------------------


def party_post(client, action, data=None, *, party=None, **extra):
    args = ["widelands", party] if party is not None else ["widelands"]
    return client.post(reverse(f"matchmaking:party_{action}", args=args), data or {}, **extra)


def test_the_party_box_explains_itself_and_invites_by_username(ladder, player, opponent):
    alice = signed_in(player)
    page = alice.get(ladder.get_absolute_url())
    assert 'id="party-box"' in page.text and "search together and always play on the same team" in page.text

    invited = party_post(alice, "invite", {"username": "BOB"}, **HTMX)

    assert invited.status_code == 200 and "<html" not in invited.text
    assert "bob is invited: they have 10 minutes to accept." in invited.text
    assert "leader</span>" in invited.text and "invited</span>" in invited.text and "Withdraw" in invited.text
    assert 'hx-swap-oob="true"' in invited.text  # the join form follows the party's size


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("nobody", "There is no player called “nobody”."),
        ("alice", "You are already in your own party."),
        ("", "Type the username of the player to invite."),
    ],
)
def test_refused_invitations_are_shown_in_the_box(ladder, player, username, message):
    alice = signed_in(player)

    partial = party_post(alice, "invite", {"username": username}, **HTMX)
    full = party_post(alice, "invite", {"username": username}, follow=True)

    assert message in partial.text and 'role="alert"' in partial.text
    assert message in full.text and full.redirect_chain[-1][0] == ladder.get_absolute_url()


def test_accepting_an_invitation_joins_the_party_and_narrows_the_formats(ladder, player, opponent):
    alice, bob = signed_in(player), signed_in(opponent)
    party_post(alice, "invite", {"username": "bob"}, **HTMX)
    page = bob.get(ladder.get_absolute_url())
    assert "<strong>alice</strong> invites you to their party" in page.text
    party = parties.current_party(ladder=ladder, player=player)

    accepted = party_post(bob, "answer", {"answer": "accept"}, party=party.pk, **HTMX)

    assert escape(ACCEPTED % {"leader": "alice"}) in accepted.text and "Leave the party" in accepted.text
    assert boxes(accepted.text) == {"2v2": True}  # a party of two fits neither 1 v 1 nor a free-for-all
    assert boxes(alice.get(ladder.get_absolute_url()).text) == {"2v2": True}

    left = party_post(bob, "leave", **HTMX)

    assert LEFT in left.text and boxes(left.text) == {"1v1": True, "2v2": False, "ffa4": False}
    assert PartyMember.objects.get(player=opponent).status == PartyStatus.LEFT


def test_declining_an_invitation_and_answering_it_twice(ladder, player, opponent):
    alice, bob = signed_in(player), signed_in(opponent)
    party_post(alice, "invite", {"username": "bob"})
    party = parties.current_party(ladder=ladder, player=player)

    declined = party_post(bob, "answer", {"answer": "decline"}, party=party.pk, **HTMX)
    again = party_post(bob, "answer", {"answer": "accept"}, party=party.pk, follow=True)

    assert escape(DECLINED % {"leader": "alice"}) in declined.text
    assert parties.NO_INVITATION in again.text


def test_the_leader_withdraws_an_invitation_and_others_cannot(ladder, player, opponent):
    alice, bob = signed_in(player), signed_in(opponent)
    rated(ladder, "cid", 1500)
    party_post(alice, "invite", {"username": "cid"})

    too_many = party_post(alice, "invite", {"username": "bob"}, **HTMX)
    refused = party_post(bob, "withdraw", {"username": "cid"}, **HTMX)
    withdrawn = party_post(alice, "withdraw", {"username": "cid"}, **HTMX)

    assert "A party in Widelands has at most 2 players (its largest team); yours would have 3." in too_many.text
    assert "You are not in a party in Widelands." in refused.text
    assert escape(WITHDRAWN % {"username": "cid"}) in withdrawn.text
    assert not PartyMember.objects.filter(player__username="cid", status=PartyStatus.INVITED).exists()


def test_a_party_searches_together_and_leaving_the_party_ends_the_search(ladder, player, opponent):
    alice, bob = signed_in(player), signed_in(opponent)
    party_post(alice, "invite", {"username": "bob"})
    party_post(bob, "answer", {"answer": "accept"}, party=parties.current_party(ladder=ladder, player=player).pk)
    rated(ladder, "cid", 1500)

    searching = join(alice, ["2v2"], **HTMX)
    assert "You search with your party of 2" in searching.text
    assert ">0 in 2 v 2<" in searching.text  # the party is not its own opponent
    assert QueueEntry.objects.filter(status=EntryStatus.WAITING).count() == 2
    assert parties.SEARCHING in party_post(alice, "invite", {"username": "cid"}, **HTMX).text

    left = party_post(bob, "leave", **HTMX)

    assert LEFT in left.text
    assert not QueueEntry.objects.filter(status=EntryStatus.WAITING).exists()


def test_party_actions_are_post_only_signed_in_and_csrf_checked(ladder, player):
    url = reverse("matchmaking:party_invite", args=["widelands"])
    assert Client().post(url, {"username": "bob"}).status_code == 302
    assert signed_in(player).get(url).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(player)
    assert strict.post(url, {"username": "bob"}, **HTMX).status_code == 403
    assert signed_in(player).post(reverse("matchmaking:party_answer", args=["widelands", 999])).status_code == 404


@pytest.mark.ladder(ready_window_seconds=0)
def test_a_free_for_all_is_reported_with_each_players_place(ladder):
    clients = {
        name: signed_in(rated(ladder, name, 1500 + 20 * n)) for n, name in enumerate(["ann", "ben", "cat", "dan"])
    }
    for client in clients.values():
        join(client, ["ffa4"])
    match = QueueEntry.objects.get(player__username="dan").match
    page = clients["ann"].get(match.get_absolute_url())
    assert "Report the places" in page.text and 'name="place-3"' in page.text
    url = reverse("ladder:match_result", args=[match.pk])

    for bad in ({"place-0": "1"}, {f"place-{i}": "²" for i in range(4)}, {f"place-{i}": "5" for i in range(4)}):
        refused = clients["ann"].post(url, bad, follow=True)
        assert refused.status_code == 200 and "Give each player a place from 1 to 4." in refused.text
    by_side = dict(Participant.objects.filter(match=match).values_list("player__username", "side__index"))
    places = {"ann": 2, "ben": 1, "cat": 4, "dan": 3}
    clients["ann"].post(url, {f"place-{by_side[name]}": str(place) for name, place in places.items()})

    match.refresh_from_db()
    assert match.status == "pending"
    got = dict(MatchSide.objects.filter(match=match).values_list("index", "placement"))
    assert {name: got[index] for name, index in by_side.items()} == places


def test_the_match_page_settles_a_lapsed_ready_check_before_its_header(ladder):
    clients = [signed_in(rated(ladder, name, 1500)) for name in ("ann", "ben", "cat", "dan")]
    for client in clients:
        join(client, ["2v2"])
    match = QueueEntry.objects.get(player__username="dan").match
    Match.objects.filter(pk=match.pk).update(ready_deadline=timezone.now() - timedelta(seconds=1))

    page = clients[0].get(match.get_absolute_url())

    assert '<span class="badge status-cancelled">Cancelled</span>' in page.text
    assert "Waiting for players to be ready" not in page.text
