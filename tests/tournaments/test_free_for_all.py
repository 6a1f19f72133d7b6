"""Free-for-all tournaments on the real database: pods seated by rating then by standings,
each pod a free-for-all ladder match, places from its confirmed result, placement points."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder.matches.reporting import match_confirm, match_report_result
from ladder.models import CancelReason, Match, MatchStatus
from matchmaking import lifecycle
from notifications.models import Kind, Notification
from ratings.models import PlayerRating, RatingEvent
from tests.factories import LadderFactory, member
from tournaments import formats, services
from tournaments.models import Board, BoardKind, EntryStatus, Format, PodSeat, Status, Tournament
from webhooks.models import Webhook, WebhookDelivery

pytestmark = pytest.mark.django_db


@pytest.fixture
def ffa_ladder():
    return LadderFactory(ready_window_seconds=0, allow_free_for_all=True, max_players=8)


def make(ladder, moderator, **fields) -> Tournament:
    now = timezone.now()
    settings = {
        "name": "Pod night",
        "slug": "pod-night",
        "format": Format.FREE_FOR_ALL,
        "rounds": 3,
        "pod_size": 4,
        "registration_closes_at": now + timedelta(hours=1),
        "starts_at": now + timedelta(hours=1),
        "check_in_minutes": 0,
        **fields,
    }
    return services.tournament_create(ladder=ladder, by=moderator, **settings)


def entered(ladder, tournament, count: int) -> list:
    players = [member(ladder, f"f{n}") for n in range(count)]
    for n, player in enumerate(players):  # distinct ratings: the seating follows them
        PlayerRating.objects.filter(ladder=ladder, player=player).update(rating=1900 - 25 * n)
        services.entry_register(tournament=tournament, captain=player)
    return players


def pods_of_round(tournament: Tournament, number: int) -> list[list[int]]:
    return [
        list(PodSeat.objects.filter(board=board).order_by("index").values_list("entry_id", flat=True))
        for board in Board.objects.filter(tournament=tournament, round__number=number, kind=BoardKind.POD).order_by(
            "number"
        )
    ]


def play_pods(tournament: Tournament, order=None) -> None:
    """Each open pod: its first seat reports the places (seat order unless ``order`` says), the others confirm."""
    now = timezone.now()
    for board in Board.objects.filter(tournament=tournament, result__isnull=True, kind=BoardKind.POD):
        match = Match.objects.get(pk=board.match_id)
        seats = list(PodSeat.objects.filter(board=board).order_by("index").select_related("entry"))
        placements = order(seats) if order else list(range(1, len(seats) + 1))
        match_report_result(match=match, reporter=seats[0].entry.captain, placements=placements, now=now)
        for seat in seats[1:]:
            match_confirm(match=Match.objects.get(pk=match.pk), user=seat.entry.captain, now=now)


def test_eleven_players_play_three_rounds_of_pods_and_are_ranked_by_placement_points(ffa_ladder, moderator):
    tournament = make(ffa_ladder, moderator)
    entered(ffa_ladder, tournament, 11)

    tournament = services.tournament_start(tournament=tournament, by=moderator)

    # Eleven, at most four a pod: pods of 4, 4, 3, the strongest together, each a ladder match of its size.
    seeds = {entry.pk: entry.seed for entry in tournament.entries.all()}
    first = pods_of_round(tournament, 1)
    assert [[seeds[e] for e in pod] for pod in first] == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11]]
    matches = [Match.objects.get(pk=b.match_id) for b in Board.objects.filter(tournament=tournament, kind="pod")]
    assert sorted(m.queue_format for m in matches) == ["ffa3", "ffa4", "ffa4"]
    assert all(
        m.status == MatchStatus.SCHEDULED and m.sides.count() == len(pod) for m, pod in zip(matches, first, strict=True)
    )
    told = Notification.objects.filter(kind=Kind.TOURNAMENT, data__event="paired")
    assert told.count() == 11
    top = tournament.entries.get(seed=1).captain
    assert told.get(recipient=top).data["opponent"] == "f1, f2 and f3"

    for _ in range(3):
        play_pods(tournament)
        tournament = services.tournament_advance(tournament=tournament)

    assert tournament.status == Status.FINISHED and tournament.current_round == 3
    # Rated: every pod is one rating event of the ladder.
    assert RatingEvent.objects.filter(match__tournament_board__tournament=tournament).count() == 9
    standings = services.standings_of(tournament)
    by_id = {row.id: row for row in standings}
    # The independent check: each entrant's points are the sum of the formula over its pods.
    rule = tournament.rule
    for entry in tournament.entries.all():
        expected = 0.0
        for board in Board.objects.filter(tournament=tournament, kind="pod"):
            size = PodSeat.objects.filter(board=board).count()
            seat = PodSeat.objects.filter(board=board, entry=entry).first()
            if seat is not None:
                expected += rule.loss + (rule.win - rule.loss) * (size - seat.place) / (size - 1)
        assert by_id[entry.pk].points == pytest.approx(expected)
        assert by_id[entry.pk].games == 3
    # Seat order is the places, so seat 1 of each pod wins it: the top seed won all three.
    assert standings[0].id == tournament.entries.get(seed=1).pk and standings[0].points == 3.0
    assert standings[0].tiebreaks[0] == 3  # pods won
    # Rounds 2 and 3 seat by the standings: the leaders meet.
    second = pods_of_round(tournament, 2)
    after_one = formats.ffa_standings(
        list(seeds),
        [p for p in services.pods_of(tournament) if p.round == 1],
        rule,
    )
    leaders = [row.id for row in after_one[:4]]
    assert sorted(second[0]) == sorted(leaders)
    finished = Notification.objects.filter(kind=Kind.TOURNAMENT, data__event="finished")
    assert finished.count() == 11 and finished.get(recipient=top).data["rank"] == 1


def test_tied_placements_share_places_and_their_points(ffa_ladder, moderator):
    tournament = make(ffa_ladder, moderator, rounds=1)
    entered(ffa_ladder, tournament, 4)
    tournament = services.tournament_start(tournament=tournament, by=moderator)

    play_pods(tournament, order=lambda seats: [1, 2, 2, 4])
    tournament = services.tournament_advance(tournament=tournament)

    places = dict(PodSeat.objects.filter(tournament=tournament).values_list("entry__seed", "place"))
    assert places == {1: 1.0, 2: 2.5, 3: 2.5, 4: 4.0}
    points = {row.id: row.points for row in services.standings_of(tournament)}
    by_seed = {entry.seed: entry.pk for entry in tournament.entries.all()}
    assert points[by_seed[1]] == 1.0 and points[by_seed[4]] == 0.0
    assert points[by_seed[2]] == points[by_seed[3]] == pytest.approx(0.5)
    ranks = {row.id: row.rank for row in services.standings_of(tournament)}
    assert ranks[by_seed[2]] == ranks[by_seed[3]] == 2


def test_a_missed_ready_check_places_the_ready_first_and_withdraws_the_others(moderator):
    ladder = LadderFactory(ready_window_seconds=60, allow_free_for_all=True, max_players=8)
    tournament = make(ladder, moderator, rounds=2)
    players = entered(ladder, tournament, 4)
    tournament = services.tournament_start(tournament=tournament, by=moderator)
    board = Board.objects.get(tournament=tournament, kind=BoardKind.POD)
    match = Match.objects.get(pk=board.match_id)
    assert match.status == MatchStatus.READY_CHECK
    now = timezone.now()
    for player in players[:2]:
        lifecycle.ready(match=match, user=player, now=now)
    lifecycle.sweep_matches(now=now + timedelta(minutes=5))
    assert Match.objects.get(pk=match.pk).cancel_reason == CancelReason.READY_MISSED

    tournament = services.tournament_advance(tournament=tournament, now=now + timedelta(minutes=5))

    places = dict(PodSeat.objects.filter(board=board).values_list("entry__captain", "place"))
    assert places == {players[0].pk: 1.5, players[1].pk: 1.5, players[2].pk: 3.5, players[3].pk: 3.5}
    statuses = dict(tournament.entries.values_list("captain", "status"))
    assert statuses[players[2].pk] == statuses[players[3].pk] == EntryStatus.WITHDRAWN
    # Two left: fewer than a pod of three, so the tournament ends after the round.
    assert tournament.status == Status.FINISHED


def test_an_organiser_decides_a_pod_by_its_places(ffa_ladder, moderator):
    tournament = make(ffa_ladder, moderator, rounds=1)
    entered(ffa_ladder, tournament, 3)
    tournament = services.tournament_start(tournament=tournament, by=moderator)
    board = Board.objects.get(tournament=tournament, kind=BoardKind.POD)

    with pytest.raises(ValidationError) as refused:
        services.board_decide(board=board, by=moderator, result=1.0, reason="no show")
    assert refused.value.message_dict == {
        "placements": ["A free-for-all game is decided by its places: one for each of its 3 players, 1 the best."]
    }
    for wrong in ([1, 2], [1, 2, 4], [2, 2, 3], [1, 2, True]):
        with pytest.raises(ValidationError):
            services.board_decide(board=board, by=moderator, placements=wrong, reason="no show")
    assert Board.objects.get(pk=board.pk).result is None

    services.board_decide(board=board, by=moderator, placements=[3, 1, 2], reason="read from the replay")

    places = list(PodSeat.objects.filter(board=board).order_by("index").values_list("place", flat=True))
    assert places == [3.0, 1.0, 2.0]
    match = Match.objects.get(pk=board.match_id)
    assert match.status == MatchStatus.CONFIRMED
    assert [side.placement for side in match.sides.order_by("index")] == [3, 1, 2]
    tournament = services.tournament_advance(tournament=tournament)
    assert tournament.status == Status.FINISHED
    assert services.standings_of(tournament)[0].id == PodSeat.objects.get(board=board, index=1).entry_id


def test_a_withdrawal_leaves_the_pod_to_its_match_and_the_next_round_to_the_rest(ffa_ladder, moderator):
    tournament = make(ffa_ladder, moderator, rounds=2)
    players = entered(ffa_ladder, tournament, 7)
    tournament = services.tournament_start(tournament=tournament, by=moderator)
    leaver = tournament.entries.get(captain=players[6])

    services.entry_withdraw(entry=leaver, by=players[6])

    board = Board.objects.get(tournament=tournament, kind=BoardKind.POD, seats__entry=leaver)
    assert board.result is None and Match.objects.get(pk=board.match_id).status == MatchStatus.SCHEDULED
    play_pods(tournament)
    tournament = services.tournament_advance(tournament=tournament)
    assert PodSeat.objects.get(board=board, entry=leaver).place is not None
    second = pods_of_round(tournament, 2)
    assert sorted(len(pod) for pod in second) == [3, 3]
    assert leaver.pk not in {entry for pod in second for entry in pod}


def test_a_field_no_pods_can_seat_leaves_its_lowest_out_with_a_middle_bye(moderator):
    ladder = LadderFactory(ready_window_seconds=0, allow_free_for_all=True, max_players=4)
    tournament = make(ladder, moderator, rounds=2, pod_size=4)
    entered(ladder, tournament, 5)

    tournament = services.tournament_start(tournament=tournament, by=moderator)

    bye = Board.objects.get(tournament=tournament, round__number=1, kind=BoardKind.BYE)
    assert bye.a.seed == 5
    assert [len(pod) for pod in pods_of_round(tournament, 1)] == [4]
    play_pods(tournament)
    tournament = services.tournament_advance(tournament=tournament)
    points = {row.id: row.points for row in services.standings_of(tournament)}
    assert points[bye.a_id] == pytest.approx(0.5)  # (win + loss) / 2
    second_bye = Board.objects.get(tournament=tournament, round__number=2, kind=BoardKind.BYE)
    assert second_bye.a_id != bye.a_id, "nobody sits out twice while another has not"


def test_a_free_for_all_needs_a_ladder_that_takes_such_games_and_three_entries(moderator):
    duel_only = LadderFactory(allow_free_for_all=False)
    with pytest.raises(ValidationError) as refused:
        make(duel_only, moderator)
    assert "does not take free-for-all games" in refused.value.message_dict["format"][0]
    small = LadderFactory(allow_free_for_all=True, max_players=4)
    with pytest.raises(ValidationError) as refused:
        make(small, moderator, pod_size=6)
    assert refused.value.message_dict["pod_size"] == [f"{small.name} takes games of at most 4 players."]
    with pytest.raises(ValidationError) as refused:
        make(small, moderator, slug="teams", pod_size=4, team_size=2)
    assert "team_size" in refused.value.message_dict

    ladder = LadderFactory(allow_free_for_all=True, max_players=8)
    tournament = make(ladder, moderator)
    entered(ladder, tournament, 2)
    with pytest.raises(ValidationError) as refused:
        services.tournament_start(tournament=tournament, by=moderator)
    assert refused.value.messages == ["A free-for-all tournament needs at least three entries to start; it has 2."]
    assert Tournament.objects.get(pk=tournament.pk).status == Status.REGISTRATION


def test_pairings_and_results_reach_the_webhooks_with_every_player(ffa_ladder, moderator):
    Webhook.objects.create(
        ladder=ffa_ladder,
        name="#pods",
        url="https://example.org/hook",
        events=["tournament.paired", "tournament.result", "tournament.finished"],
        format="json",
    )
    tournament = make(ffa_ladder, moderator, rounds=1)
    entered(ffa_ladder, tournament, 3)
    tournament = services.tournament_start(tournament=tournament, by=moderator)
    play_pods(tournament, order=lambda seats: [2, 1, 3])
    services.tournament_advance(tournament=tournament)

    paired, result, finished = (json.loads(d.payload) for d in WebhookDelivery.objects.order_by("id"))
    assert paired["summary"] == "Pod night, round 1: f0, f1, f2"
    assert paired["data"]["games"][0]["players"] == ["f0", "f1", "f2"]
    assert result["summary"] == "Pod night, round 1: 1. f1, 2. f0, 3. f2"
    assert result["data"]["places"] == [
        {"entry": "f1", "place": 1.0},
        {"entry": "f0", "place": 2.0},
        {"entry": "f2", "place": 3.0},
    ]
    assert finished["summary"] == "Pod night is over: #1 f1, #2 f0, #3 f2."


def test_the_page_shows_the_pods_their_places_and_the_placement_standings(client, ffa_ladder, moderator):
    tournament = make(ffa_ladder, moderator, rounds=2)
    entered(ffa_ladder, tournament, 4)
    tournament = services.tournament_start(tournament=tournament, by=moderator)
    url = tournament.get_absolute_url()

    before = client.get(url).content.decode()
    assert "pods of up to 4" in before and "pod of 4:" in before and "f0, f1, f2, f3" in before
    assert "Placement points" in before

    play_pods(tournament, order=lambda seats: [2, 1, 3, 4])
    page = client.get(f"{url}?round=1").content.decode()

    assert "1. f1, 2. f0, 3. f2, 4. f3" in page
    assert "Pods won" in page and "Beaten" in page
    # f1 won: a win's point; f0 second of four: two thirds.
    assert '<td class="num"><strong>1</strong></td>' in page and "<strong>0.7</strong>" in page


def test_an_organiser_decides_a_pod_on_the_page_and_a_bad_entry_is_a_message(client, ffa_ladder, moderator):
    tournament = make(ffa_ladder, moderator, rounds=1)
    entered(ffa_ladder, tournament, 3)
    tournament = services.tournament_start(tournament=tournament, by=moderator)
    board = Board.objects.get(tournament=tournament, kind=BoardKind.POD)
    client.force_login(moderator)
    url = f"{tournament.get_absolute_url()}organise/"

    form = client.get(tournament.get_absolute_url()).content.decode()
    assert 'id="organise-placements"' in form and "Board 1: f0, f1, f2" in form
    wrong = client.post(url, {"action": "decide", "board": board.pk, "placements": "1 x", "reason": "r"}, follow=True)
    assert "one for each of its 3 players" in wrong.content.decode()
    assert Board.objects.get(pk=board.pk).result is None

    done = client.post(url, {"action": "decide", "board": board.pk, "placements": "3, 1, 2", "reason": "replay"})
    assert done.status_code == 302
    assert list(PodSeat.objects.filter(board=board).order_by("index").values_list("place", flat=True)) == [3, 1, 2]


def test_the_api_lists_each_pods_seats_and_an_organiser_decides_one_by_its_placements(
    ffa_ladder, moderator, client_for
):
    tournament = make(ffa_ladder, moderator, rounds=1)
    entered(ffa_ladder, tournament, 3)
    services.tournament_start(tournament=tournament, by=moderator)
    base = f"/api/v1/ladders/{ffa_ladder.slug}/tournaments/pod-night/"

    pairings = client_for(moderator).get(f"{base}pairings/").json()
    (board,) = pairings["boards"]
    assert board["kind"] == "pod" and board["b"] is None and board["result"] is None
    assert board["seats"] == [{"entry": f"f{n}", "place": None} for n in range(3)]
    assert client_for(moderator).get(base).json()["pod_size"] == 4

    pk = Board.objects.get(tournament=tournament).pk
    missing = client_for(moderator).post(
        f"{base}actions/", {"action": "decide", "board": pk, "reason": "r"}, format="json"
    )
    assert missing.status_code == 400 and "placements" in missing.json()["error"]["fields"]
    wrong = client_for(moderator).post(
        f"{base}actions/", {"action": "decide", "board": pk, "placements": [1, 2], "reason": "r"}, format="json"
    )
    assert wrong.status_code == 400 and "placements" in wrong.json()["error"]["fields"]
    done = client_for(moderator).post(
        f"{base}actions/", {"action": "decide", "board": pk, "placements": [1, 3, 2], "reason": "r"}, format="json"
    )
    assert done.status_code == 200

    standings = client_for(moderator).get(f"{base}standings/").json()  # a read advances: the last pod is in
    assert client_for(moderator).get(base).json()["status"] == "finished"
    assert [row["entry"] for row in standings] == ["f0", "f2", "f1"]
    assert standings[0]["tiebreaks"] == {"pods_won": 1.0, "beaten": 2.0}


def test_the_cached_standings_follow_the_viewer_and_every_result_and_withdrawal(client, ffa_ladder, moderator):
    tournament = make(ffa_ladder, moderator, rounds=2)
    players = entered(ffa_ladder, tournament, 6)
    tournament = services.tournament_start(tournament=tournament, by=moderator)
    url = tournament.get_absolute_url()

    def my_rows(viewer) -> list[str]:
        client.force_login(viewer)
        page = client.get(url).content.decode()
        return re.findall(r'<tr class="me">\s*<td class="num">\d+</td>\s*<td>(\w+)', page)

    assert my_rows(players[0]) == ["f0"] and my_rows(players[1]) == ["f1"]  # one table each, from the cache
    client.logout()
    assert 'class="me"' not in client.get(url).content.decode()

    play_pods(tournament, order=lambda seats: list(range(len(seats), 0, -1)))  # the last seat wins each pod
    after = client.get(url).content.decode()
    assert re.search(r'<td class="num">1</td>\s*<td>f2</td>', after), "the new standings, not the cached ones"
    services.entry_withdraw(entry=tournament.entries.get(captain=players[5]), by=players[5])
    assert re.search(r"<td>f5 <span class=\"badge warn\"[^>]*>withdrawn</span>", client.get(url).content.decode())
