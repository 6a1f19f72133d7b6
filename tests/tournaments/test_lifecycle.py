"""A tournament's life on the real database: registration, start, rounds of ladder matches, results, the end."""

from __future__ import annotations

import json
from datetime import timedelta
from itertools import combinations

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder.matches.reporting import match_confirm, match_report_result
from ladder.models import Match, MatchStatus
from matchmaking import lifecycle
from notifications.models import Kind, Notification
from ratings.models import PlayerRating, RatingEvent
from tests.factories import LadderFactory, member
from tournaments import services
from tournaments.models import Board, BoardKind, EntryStatus, Format, Status, Tournament

pytestmark = pytest.mark.django_db


def make(ladder, moderator, **fields) -> Tournament:
    now = timezone.now()
    settings = {
        "name": "Saturday cup",
        "slug": "saturday-cup",
        "registration_closes_at": now + timedelta(hours=1),
        "starts_at": now + timedelta(hours=1),
        "check_in_minutes": 0,
        **fields,
    }
    return services.tournament_create(ladder=ladder, by=moderator, **settings)


def field(ladder, count: int, prefix: str = "p") -> list:
    players = [member(ladder, f"{prefix}{n}") for n in range(count)]
    for n, player in enumerate(players):  # distinct ratings: seeds follow them
        PlayerRating.objects.filter(ladder=ladder, player=player).update(rating=1800 - 40 * n)
    return players


def play_round(tournament: Tournament, winner_of=None) -> None:
    """Every open board of the current round is reported by entry a's captain and confirmed by b's."""
    now = timezone.now()
    for board in Board.objects.filter(
        tournament=tournament, round__number=tournament.current_round, result__isnull=True
    ):
        match = Match.objects.get(pk=board.match_id)
        a_wins = winner_of(board) if winner_of else board.a.rating >= board.b.rating
        match_report_result(match=match, reporter=board.a.captain, placements=[1, 2] if a_wins else [2, 1], now=now)
        match_confirm(match=Match.objects.get(pk=match.pk), user=board.b.captain, now=now)


def run(tournament: Tournament, winner_of=None, limit: int = 40) -> Tournament:
    for _ in range(limit):
        tournament = services.tournament_advance(tournament=tournament)
        if tournament.status != Status.RUNNING:
            return tournament
        play_round(tournament, winner_of)
    raise AssertionError("the tournament did not end")


@pytest.fixture
def quick_ladder():
    return LadderFactory(ready_window_seconds=0)


def test_a_swiss_of_five_is_paired_played_and_ranked(quick_ladder, moderator):
    players = field(quick_ladder, 5)
    tournament = make(quick_ladder, moderator, rounds=3)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = services.tournament_start(tournament=tournament, by=moderator)

    first = list(Board.objects.filter(tournament=tournament, round__number=1))
    assert sorted(b.kind for b in first) == ["bye", "played", "played"]
    assert all(Match.objects.get(pk=b.match_id).status == MatchStatus.SCHEDULED for b in first if b.match_id)
    assert Notification.objects.filter(kind=Kind.TOURNAMENT, data__event="paired").count() == 4

    tournament = run(tournament)

    assert tournament.status == Status.FINISHED and tournament.current_round == 3
    boards = list(Board.objects.filter(tournament=tournament))
    met = [frozenset((b.a_id, b.b_id)) for b in boards if b.b_id]
    assert len(met) == len(set(met)), "no rematch in a Swiss of five over three rounds"
    byes = [b.a_id for b in boards if b.kind == BoardKind.BYE]
    assert len(byes) == len(set(byes)) == 3
    for entry in tournament.entries.all():
        assert sum(1 for b in boards if entry.pk in (b.a_id, b.b_id)) == 3
    # Rated: each game played is a rating event of the ladder, like any confirmed match.
    assert RatingEvent.objects.filter(match__tournament_board__tournament=tournament).count() == 6
    standings = services.standings_of(tournament)
    assert standings[0].id == tournament.entries.get(captain=players[0]).pk  # the favourite won every game
    assert sum(row.points for row in standings) == 6 + 3  # a point a game, a point a bye
    told = Notification.objects.filter(kind=Kind.TOURNAMENT, data__event="finished")
    assert told.count() == 5 and told.get(recipient=players[0]).data["rank"] == 1


def test_a_round_robin_meets_everyone_once(quick_ladder, moderator):
    players = field(quick_ladder, 4)
    tournament = make(quick_ladder, moderator, format=Format.ROUND_ROBIN)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = run(services.tournament_start(tournament=tournament))

    pairs = [frozenset((b.a_id, b.b_id)) for b in Board.objects.filter(tournament=tournament) if b.b_id]
    ids = list(tournament.entries.values_list("pk", flat=True))
    assert sorted(pairs, key=sorted) == sorted((frozenset(p) for p in combinations(ids, 2)), key=sorted)
    assert tournament.current_round == 3


@pytest.mark.parametrize("count", [5, 8])
def test_single_elimination_seeds_byes_and_a_champion(quick_ladder, moderator, count):
    players = field(quick_ladder, count)
    tournament = make(quick_ladder, moderator, format=Format.SINGLE_ELIMINATION)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = run(services.tournament_start(tournament=tournament))

    assert tournament.status == Status.FINISHED
    games = Board.objects.filter(tournament=tournament).exclude(match=None)
    assert games.count() == count - 1  # each game eliminates one entry
    final = games.order_by("-round__number").first()
    assert {final.a.captain, final.b.captain} == {players[0], players[1]}  # the top two seeds meet last
    ranks = {row.id: row.rank for row in services.standings_of(tournament)}
    champion = final.a_id if final.result == 1.0 else final.b_id
    assert ranks[champion] == 1 and ranks[({final.a_id, final.b_id} - {champion}).pop()] == 2
    assert sorted(ranks.values())[:4] == [1, 2, 3, 3]  # the semi-final losers share third


def test_groups_then_playoffs(quick_ladder, moderator):
    players = field(quick_ladder, 6)
    tournament = make(quick_ladder, moderator, format=Format.GROUPS, groups=2, advance=2)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = run(services.tournament_start(tournament=tournament))

    assert tournament.status == Status.FINISHED
    stages = set(Board.objects.filter(tournament=tournament).values_list("round__stage", flat=True))
    assert stages == {"groups", "playoffs"}
    assert Board.objects.filter(tournament=tournament, round__stage="groups").exclude(match=None).count() == 6
    assert Board.objects.filter(tournament=tournament, round__stage="playoffs").exclude(match=None).count() == 3
    standings = services.standings_of(tournament)
    assert standings[0].id == tournament.entries.get(captain=players[0]).pk
    ranks = [row.rank for row in standings]
    assert ranks[:4] == [1, 2, 3, 3] and min(ranks[4:]) == 5  # then the groups' others, by points and tie-breaks


def test_double_elimination_plays_the_reset_when_the_losers_side_wins_the_final(quick_ladder, moderator):
    players = field(quick_ladder, 4)
    tournament = make(quick_ladder, moderator, format=Format.DOUBLE_ELIMINATION)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = services.tournament_start(tournament=tournament)
    top = tournament.entries.get(captain=players[0]).pk
    second = tournament.entries.get(captain=players[1]).pk

    def winner(board) -> bool:
        """The favourite wins, but the second seed beats the first in the grand final."""
        if board.bracket_key.startswith("GF") and {board.a_id, board.b_id} == {top, second}:
            return board.a_id == second
        return board.a.rating >= board.b.rating

    tournament = run(tournament, winner)

    keys = set(Board.objects.filter(tournament=tournament).values_list("bracket_key", flat=True))
    assert {"GF1", "GF2"} <= keys


def test_a_withdrawal_mid_round_forfeits_the_open_game_and_voids_its_match(quick_ladder, moderator):
    players = field(quick_ladder, 4)
    tournament = make(quick_ladder, moderator, rounds=2)
    entries = [services.entry_register(tournament=tournament, captain=p) for p in players]
    tournament = services.tournament_start(tournament=tournament)
    board = Board.objects.filter(tournament=tournament).exclude(match=None).first()
    quitter = board.b

    services.entry_withdraw(entry=quitter, by=quitter.captain)

    board.refresh_from_db()
    assert board.result == 1.0 and board.kind == BoardKind.FORFEIT
    assert Match.objects.get(pk=board.match_id).status == MatchStatus.VOID
    quitter.refresh_from_db()
    assert quitter.status == EntryStatus.WITHDRAWN
    assert len(entries) == 4


def test_an_organiser_withdrawal_needs_a_reason_and_others_cannot(quick_ladder, moderator):
    players = field(quick_ladder, 3)
    tournament = make(quick_ladder, moderator)
    entries = [services.entry_register(tournament=tournament, captain=p) for p in players]
    with pytest.raises(ValidationError, match="Say why"):
        services.entry_withdraw(entry=entries[0], by=moderator)
    with pytest.raises(ValidationError, match="not a player of this entry"):
        services.entry_withdraw(entry=entries[0], by=players[1])
    services.entry_withdraw(entry=entries[0], by=moderator, reason="asked by mail")
    assert tournament.actions.filter(action="withdraw", reason="asked by mail").exists()


def test_a_missed_ready_check_loses_the_game_and_withdraws_the_absent_entry(moderator):
    ladder = LadderFactory(ready_window_seconds=60)
    players = field(ladder, 2)
    tournament = make(ladder, moderator, rounds=2)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = services.tournament_start(tournament=tournament)
    board = Board.objects.get(tournament=tournament, round__number=1)
    match = Match.objects.get(pk=board.match_id)
    assert match.status == MatchStatus.READY_CHECK
    lifecycle.ready(match=match, user=board.a.captain)

    lifecycle.settle(match, now=timezone.now() + timedelta(minutes=5))
    tournament = services.tournament_advance(tournament=tournament)

    board.refresh_from_db()
    assert (board.result, board.kind) == (1.0, BoardKind.FORFEIT)
    assert board.b.status == EntryStatus.WITHDRAWN
    assert tournament.status == Status.FINISHED  # one entry left: nothing more to pair


def test_registration_checks_the_conditions(quick_ladder, moderator):
    strong, weak, fresh = field(quick_ladder, 3)
    PlayerRating.objects.filter(ladder=quick_ladder, player=fresh).update(games=0)
    PlayerRating.objects.filter(ladder=quick_ladder).exclude(player=fresh).update(games=10)
    tournament = make(quick_ladder, moderator, max_rating=1790, min_games=5)
    with pytest.raises(ValidationError, match="ratings up to 1790"):
        services.entry_register(tournament=tournament, captain=strong)
    with pytest.raises(ValidationError, match="needs 5 rated games"):
        services.entry_register(tournament=tournament, captain=fresh)
    services.entry_register(tournament=tournament, captain=weak)
    with pytest.raises(ValidationError, match="already entered"):
        services.entry_register(tournament=tournament, captain=weak)
    outsider = member(LadderFactory(slug="other"), "outsider")
    with pytest.raises(ValidationError, match="not a member of this ladder"):
        services.entry_register(tournament=tournament, captain=outsider)


def test_check_in_decides_who_plays(quick_ladder, moderator):
    players = field(quick_ladder, 3)
    tournament = make(quick_ladder, moderator, check_in_minutes=90)
    entries = [services.entry_register(tournament=tournament, captain=p) for p in players]
    services.entry_check_in(entry=entries[0], player=players[0])
    services.entry_check_in(entry=entries[1], player=players[1])

    tournament = services.tournament_start(tournament=tournament)

    entries[2].refresh_from_db()
    assert entries[2].status == EntryStatus.WITHDRAWN and entries[2].withdrawn_reason == "did not check in"
    assert Board.objects.filter(tournament=tournament).count() == 1


def test_a_late_entry_scores_the_rounds_it_missed_as_absences(quick_ladder, moderator):
    players = field(quick_ladder, 5)
    tournament = make(quick_ladder, moderator, rounds=4)
    for player in players[:4]:
        services.entry_register(tournament=tournament, captain=player)
    tournament = services.tournament_start(tournament=tournament)
    play_round(tournament)
    tournament = services.tournament_advance(tournament=tournament)
    assert tournament.current_round == 2

    late = services.entry_register(tournament=tournament, captain=players[4])
    assert late.joined_round == 3
    play_round(tournament)
    services.tournament_advance(tournament=tournament)

    absences = Board.objects.filter(tournament=tournament, a=late, kind=BoardKind.ABSENT)
    assert absences.count() == 2
    assert (
        Board.objects.filter(tournament=tournament, round__number=3).filter(b=late).exists()
        or Board.objects.filter(tournament=tournament, round__number=3, a=late).exclude(kind=BoardKind.ABSENT).exists()
    )


def test_a_team_tournament_plays_two_v_two_matches(moderator):
    ladder = LadderFactory(ready_window_seconds=0, allow_teams=True)
    players = field(ladder, 4)
    tournament = make(ladder, moderator, team_size=2, rounds=1)
    with pytest.raises(ValidationError, match="has 2 players"):
        services.entry_register(tournament=tournament, captain=players[0])
    services.entry_register(tournament=tournament, captain=players[0], teammates=[players[3]], name="Ends")
    services.entry_register(tournament=tournament, captain=players[1], teammates=[players[2]], name="Middles")

    tournament = services.tournament_start(tournament=tournament)

    board = Board.objects.get(tournament=tournament)
    match = Match.objects.get(pk=board.match_id)
    assert match.queue_format == "2v2" and match.participants.count() == 4
    tournament = run(tournament)
    assert tournament.status == Status.FINISHED


def test_an_organiser_decides_a_game_and_pairs_a_round_again(quick_ladder, moderator):
    players = field(quick_ladder, 4)
    tournament = make(quick_ladder, moderator, rounds=2)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = services.tournament_start(tournament=tournament)
    first = set(Board.objects.filter(tournament=tournament).values_list("match_id", flat=True))

    services.round_repair(round=tournament.round_set.get(number=1), by=moderator, reason="wrong entries")

    assert all(m.status == MatchStatus.VOID for m in Match.objects.filter(pk__in=first))
    boards = list(Board.objects.filter(tournament=tournament, round__number=1))
    assert len(boards) == 2 and not first & {b.match_id for b in boards}
    with pytest.raises(ValidationError, match="Only moderators"):
        services.board_decide(board=boards[0], by=players[0], result=1.0, reason="mine")
    services.board_decide(board=boards[0], by=moderator, result=0.0, reason="the replay shows it")
    boards[0].refresh_from_db()
    assert boards[0].result == 0.0
    assert Match.objects.get(pk=boards[0].match_id).status == MatchStatus.CONFIRMED


def test_the_sweep_opens_check_in_starts_and_calls_off(quick_ladder, moderator):
    players = field(quick_ladder, 2)
    now = timezone.now()
    due = make(
        quick_ladder, moderator, check_in_minutes=0, starts_at=now, registration_closes_at=now - timedelta(minutes=1)
    )
    Tournament.objects.filter(pk=due.pk).update(
        registration_closes_at=now + timedelta(minutes=1), starts_at=now + timedelta(minutes=1)
    )
    for player in players:
        services.entry_register(tournament=due, captain=player)
    lonely = make(quick_ladder, moderator, slug="lonely", name="Lonely")
    services.entry_register(tournament=lonely, captain=member(quick_ladder, "solo"))

    swept = services.tournaments_sweep(now=now + timedelta(hours=2))

    assert swept.started == 1
    due.refresh_from_db()
    lonely.refresh_from_db()
    assert due.status == Status.RUNNING and lonely.status == Status.CANCELLED


def test_webhooks_hear_the_pairings_the_results_and_the_final_standings(quick_ladder, moderator):
    from webhooks.models import Webhook, WebhookDelivery

    Webhook.objects.create(
        ladder=quick_ladder,
        name="#cup",
        url="https://example.org/hook",
        events=["tournament.paired", "tournament.result", "tournament.finished"],
        format="json",
    )
    players = field(quick_ladder, 3)
    tournament = make(quick_ladder, moderator, rounds=1)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = run(services.tournament_start(tournament=tournament))

    events = list(WebhookDelivery.objects.order_by("id").values_list("event", flat=True))
    assert events == ["tournament.paired", "tournament.result", "tournament.finished"]
    paired, result, finished = (json.loads(d.payload) for d in WebhookDelivery.objects.order_by("id"))
    assert paired["summary"] == "Saturday cup, round 1: p0 – p1; p2: bye"
    assert paired["data"]["games"][0] == {"board": 1, "a": "p0", "b": "p1", "kind": "played"}
    assert result["summary"] == "Saturday cup, round 1: p0 1–0 p1"
    # p0 won, p2 had the bye: one point each, and the bye's virtual opponent (1 point) beats p1 (0) on Buchholz.
    assert finished["summary"] == "Saturday cup is over: #1 p2, #2 p0, #3 p1."
    assert finished["data"]["winner"] == "p2"


def test_a_running_bracket_ranks_those_still_in_above_those_out(quick_ladder, moderator):
    players = field(quick_ladder, 8)
    tournament = make(quick_ladder, moderator, format=Format.SINGLE_ELIMINATION)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = services.tournament_start(tournament=tournament)
    play_round(tournament)
    tournament = services.tournament_advance(tournament=tournament)

    standings = services.standings_of(tournament)
    winners = {tournament.entries.get(captain=p).pk for p in players[:4]}
    assert {row.id for row in standings[:4]} == winners and [row.rank for row in standings] == [1] * 4 + [5] * 4


def test_points_a_standings_table_cannot_use_are_a_form_error(quick_ladder, moderator):
    with pytest.raises(ValidationError) as refused:
        make(quick_ladder, moderator, points_win=0.0, points_loss=1.0)
    assert "points_win" in refused.value.message_dict
    assert not Tournament.objects.exists()


def test_groups_need_two_entries_each_to_start(quick_ladder, moderator):
    players = field(quick_ladder, 5)
    tournament = make(quick_ladder, moderator, format=Format.GROUPS, groups=3)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    with pytest.raises(ValidationError, match="3 groups need at least 6 entries, two a group; this tournament has 5"):
        services.tournament_start(tournament=tournament)
    assert Tournament.objects.get(pk=tournament.pk).status == Status.REGISTRATION


def test_a_group_short_of_qualifiers_after_a_withdrawal_still_leads_to_playoffs(quick_ladder, moderator):
    players = field(quick_ladder, 4)
    tournament = make(quick_ladder, moderator, format=Format.GROUPS, groups=2, advance=2)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    tournament = services.tournament_start(tournament=tournament)
    quitter = Board.objects.filter(tournament=tournament).first().b
    services.entry_withdraw(entry=quitter, by=quitter.captain)

    tournament = run(tournament)

    assert tournament.status == Status.FINISHED
    playoff = Board.objects.filter(tournament=tournament, round__stage="playoffs").exclude(match=None)
    assert playoff.count() == 1  # each group sends one: the short group has one entry left
    assert not Notification.objects.filter(
        kind=Kind.TOURNAMENT, data__event="paired", recipient=quitter.captain, data__round=2
    ).exists()
