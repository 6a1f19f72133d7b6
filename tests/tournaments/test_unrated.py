"""Rated or unrated, chosen per tournament (docs/rules.md §22): an unrated tournament's games are
played, reported and confirmed like any, decide its standings, and change no rating."""

from __future__ import annotations

import pytest

from ladder.models import Match, MatchStatus
from ratings.models import PlayerRating, RatingChange, RatingEvent
from ratings.replay import ladder_replay
from tests.factories import LadderFactory
from tests.tournaments.test_lifecycle import field, make, run
from tournaments import services
from tournaments.models import Board, Status

pytestmark = pytest.mark.django_db


def standing(ladder) -> dict[int, tuple]:
    return {
        r.player_id: (r.rating, r.rd, r.games, r.wins, r.losses) for r in PlayerRating.objects.filter(ladder=ladder)
    }


@pytest.mark.parametrize("report_path", ["two statements", "ORM"], indirect=True)
def test_an_unrated_swiss_is_played_and_ranked_without_changing_a_rating(moderator, api, client, report_path):
    ladder = LadderFactory(ready_window_seconds=0)
    players = field(ladder, 4)
    tournament = make(ladder, moderator, rounds=2, rated=False)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)
    before = standing(ladder)
    tournament = services.tournament_start(tournament=tournament, by=moderator)

    tournament = run(tournament)

    assert tournament.status == Status.FINISHED
    games = Match.objects.filter(tournament_board__tournament=tournament)
    assert games.count() == 4 and not games.filter(rated=True).exists()
    assert games.filter(status=MatchStatus.CONFIRMED, rated_at__isnull=True).count() == 4
    assert standing(ladder) == before
    assert not RatingEvent.objects.filter(ladder=ladder).exists() and not RatingChange.objects.exists()
    standings = services.standings_of(tournament)
    assert standings[0].id == tournament.entries.get(captain=players[0]).pk and standings[0].points == 2
    assert Board.objects.filter(tournament=tournament, result__isnull=True).count() == 0
    ladder_replay(ladder=ladder)
    assert standing(ladder) == before

    body = api.get(f"/api/v1/ladders/{ladder.slug}/tournaments/{tournament.slug}/").json()
    assert body["rated"] is False
    rows = api.get(f"/api/v1/ladders/{ladder.slug}/tournaments/{tournament.slug}/standings/").json()
    assert [(row["wins"], row["losses"], row["games"]) for row in rows] == [(2, 0, 2), (1, 1, 2), (1, 1, 2), (0, 2, 2)]
    match = api.get(f"/api/v1/matches/{games.first().pk}/").json()
    assert match["unrated"] is True and match["rated"] is False
    assert "unrated: its games change no rating" in client.get(tournament.get_absolute_url()).content.decode()
    page = client.get(games.first().get_absolute_url()).content.decode()
    assert f"Unrated: a game of {tournament.name}, an unrated tournament" in page


def test_a_rated_tournaments_games_are_rated(moderator):
    ladder = LadderFactory(ready_window_seconds=0)
    players = field(ladder, 2)
    tournament = make(ladder, moderator, rounds=1)
    for player in players:
        services.entry_register(tournament=tournament, captain=player)

    run(services.tournament_start(tournament=tournament, by=moderator))

    assert tournament.rated
    [game] = Match.objects.filter(tournament_board__tournament=tournament)
    assert game.rated and game.rated_at is not None
    assert RatingEvent.objects.filter(match=game).count() == 1
