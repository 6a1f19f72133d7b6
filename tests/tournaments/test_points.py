"""Tournament points across events: the table, the decay, the ladder's constants, the page and the profile.

The expected figures are worked by hand from the formula of docs/rules.md §22 (Kaggle's,
from the seed), not by ``competition_points``:
field factor log10(1 + log10 4) = 0.2046788, log10(1 + log10 2) = 0.1142873; 2^(−0.75) =
0.5946036, 4^(−0.75) = 0.3535534; e^(−100/500) = 0.8187308.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from ladder.models import Ladder
from tests.factories import LadderFactory, member
from tournaments.models import (
    Board,
    Entry,
    EntryMember,
    Format,
    Round,
    Status,
    Tournament,
    TournamentPointsSettings,
)
from tournaments.ranking import player_points, points_table

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

# Spring cup, 100 days ago, four players: ann 1st, bob and cy 2nd equal, dan 4th.
ANN_SPRING = 100000 * 0.2046788 * 0.8187308  # 16,757.68
SECOND_SPRING = 100000 * 0.5946036 * 0.2046788 * 0.8187308  # 9,964.18
DAN_SPRING = 100000 * 0.3535534 * 0.2046788 * 0.8187308  # 5,924.73
# Pairs cup, finished now, two teams of two: bob and fay beat ann and eve.
WINNERS_PAIRS = 100000 / 2**0.5 * 0.1142873  # 8,081.33 each
LOSERS_PAIRS = 100000 / 2**0.5 * 0.5946036 * 0.1142873  # 4,805.19 each


def finished(
    ladder: Ladder,
    name: str,
    teams: list[list[User]],
    results: list[list[tuple[int, int]]],
    *,
    days_ago: float,
    team_size: int = 1,
    benched: tuple[User, ...] = (),
) -> Tournament:
    """A Swiss tournament finished ``days_ago`` before NOW: ``results`` are rounds of (winner, loser) team indexes.

    No tie-breaks, so teams equal on points share a rank. ``benched`` registered and never played (no seed).
    """
    start = NOW - timedelta(days=days_ago + 1)
    tournament = Tournament.objects.create(
        ladder=ladder,
        name=name,
        slug=name.lower().replace(" ", "-"),
        format=Format.SWISS,
        team_size=team_size,
        rounds=len(results),
        tiebreaks="",
        registration_closes_at=start,
        starts_at=start,
        status=Status.FINISHED,
        started_at=start,
        finished_at=NOW - timedelta(days=days_ago),
    )
    entries = []
    for seed, players in enumerate([*teams, *([player] for player in benched)], start=1):
        entry = Entry.objects.create(
            tournament=tournament,
            name=" & ".join(player.username for player in players),
            captain=players[0],
            rating=1500.0,
            seed=seed if seed <= len(teams) else None,
            registered_at=start,
        )
        for player in players:
            EntryMember.objects.create(entry=entry, tournament=tournament, player=player)
        entries.append(entry)
    for number, games in enumerate(results, start=1):
        round_ = Round.objects.create(tournament=tournament, number=number, started_at=start, deadline=start)
        for board, (winner, loser) in enumerate(games, start=1):
            Board.objects.create(
                round=round_,
                tournament=tournament,
                number=board,
                a=entries[winner],
                b=entries[loser],
                result=1.0,
                finished_at=start,
            )
    return tournament


@pytest.fixture
def ladder() -> Ladder:
    return LadderFactory(slug="chess", name="Chess")


@pytest.fixture
def cast(ladder: Ladder) -> dict[str, User]:
    return {name: member(ladder, name) for name in ("ann", "bob", "cy", "dan", "eve", "fay", "gil")}


@pytest.fixture
def spring(ladder: Ladder, cast: dict[str, User]) -> Tournament:
    ann, bob, cy, dan = (cast[name] for name in ("ann", "bob", "cy", "dan"))
    # Round 1: ann beat bob, cy beat dan; round 2: ann beat cy, bob beat dan. ann 2, bob 1, cy 1, dan 0.
    return finished(
        ladder, "Spring cup", [[ann], [bob], [cy], [dan]], [[(0, 1), (2, 3)], [(0, 2), (1, 3)]], days_ago=100,
        benched=(cast["gil"],),
    )  # fmt: skip


@pytest.fixture
def pairs(ladder: Ladder, cast: dict[str, User]) -> Tournament:
    return finished(
        ladder, "Pairs cup", [[cast["ann"], cast["eve"]], [cast["bob"], cast["fay"]]], [[(1, 0)]], days_ago=0,
        team_size=2,
    )  # fmt: skip


def table(ladder: Ladder, now: datetime = NOW) -> list[tuple[int, str, float]]:
    return [(row.rank, row.player.username, row.points) for row in points_table(ladder, now)]


def test_points_sum_over_finished_tournaments_with_teams_and_decay(ladder, spring, pairs):
    rows = table(ladder)

    assert [(rank, name) for rank, name, _ in rows] == [
        (1, "ann"), (2, "bob"), (3, "cy"), (4, "fay"), (5, "dan"), (6, "eve"),
    ]  # fmt: skip
    points = {name: value for _, name, value in rows}
    assert points["ann"] == pytest.approx(ANN_SPRING + LOSERS_PAIRS, abs=0.05)  # 21,562.87
    assert points["bob"] == pytest.approx(SECOND_SPRING + WINNERS_PAIRS, abs=0.05)  # 18,045.51
    assert points["cy"] == pytest.approx(SECOND_SPRING, abs=0.05)
    assert points["dan"] == pytest.approx(DAN_SPRING, abs=0.05)
    assert points["eve"] == pytest.approx(LOSERS_PAIRS, abs=0.05)
    assert points["fay"] == pytest.approx(WINNERS_PAIRS, abs=0.05)
    assert "gil" not in points  # entered, never seeded: did not play


def test_each_row_lists_its_events_newest_first(ladder, spring, pairs):
    ann = points_table(ladder, NOW)[0]

    assert [(event.tournament, event.rank, event.entries) for event in ann.events] == [(pairs, 2, 2), (spring, 1, 4)]
    assert ann.events[1].points == pytest.approx(ANN_SPRING, abs=0.05)


def test_equal_points_share_a_rank(ladder, spring):
    assert [(rank, name) for rank, name, _ in table(ladder)] == [(1, "ann"), (2, "bob"), (2, "cy"), (4, "dan")]


def test_points_fade_by_e_every_decay_days(ladder, spring):
    later = dict((name, value) for _, name, value in table(ladder, NOW + timedelta(days=500)))

    assert later["ann"] == pytest.approx(ANN_SPRING * 0.3678794, abs=0.05)  # e^(−1)
    assert [name for _, name, _ in table(ladder, NOW + timedelta(days=5000))] == ["ann", "bob", "cy", "dan"]


def test_the_ladders_constants_change_the_figures(ladder, spring, pairs):
    TournamentPointsSettings.objects.create(ladder=ladder, base=1000.0, rank_power=0.0, decay_days=100.0)

    points = {name: value for _, name, value in table(ladder)}

    # Every place of the spring cup is worth the same now, faded by e^(−100/100).
    assert points["dan"] == pytest.approx(1000 * 0.2046788 * 0.3678794, abs=0.001)  # 75.30
    assert points["cy"] == points["dan"]
    assert points["eve"] == pytest.approx(1000 / 2**0.5 * 0.1142873, abs=0.001)  # 80.81
    assert points["ann"] == pytest.approx(points["dan"] + points["eve"])


def test_unfinished_and_other_ladders_tournaments_do_not_count(ladder, cast, spring):
    Tournament.objects.filter(pk=spring.pk).update(status=Status.RUNNING)
    other = LadderFactory(slug="go")
    finished(other, "Go cup", [[cast["ann"]], [cast["bob"]]], [[(0, 1)]], days_ago=1)

    assert table(ladder) == []
    assert [name for _, name, _ in table(other)] == ["ann", "bob"]


def test_a_players_points_and_events(ladder, cast, spring, pairs):
    mine = player_points(ladder, cast["bob"], NOW)

    assert mine is not None
    assert mine.points == pytest.approx(SECOND_SPRING + WINNERS_PAIRS, abs=0.05)
    assert [(event.tournament.name, event.rank) for event in mine.events] == [("Pairs cup", 1), ("Spring cup", 2)]
    assert player_points(ladder, cast["gil"], NOW) is None
    assert player_points(LadderFactory(slug="go"), cast["bob"], NOW) is None


def test_the_pages_queries_do_not_grow_with_the_players(client, ladder, cast):
    finished(ladder, "Small cup", [[cast["ann"]], [cast["bob"]]], [[(0, 1)]], days_ago=3)
    with CaptureQueriesContext(connection) as two:
        assert client.get("/ladders/chess/tournaments/points/").status_code == 200
    others = [member(ladder, f"p{n}") for n in range(6)]
    go = LadderFactory(slug="go")
    finished(
        go, "Big cup", [[cast["ann"]], [cast["bob"]], *([p] for p in others)],
        [[(0, 1), (2, 3), (4, 5), (6, 7)]], days_ago=3,
    )  # fmt: skip
    with CaptureQueriesContext(connection) as eight:
        assert client.get("/ladders/go/tournaments/points/").status_code == 200

    assert len(eight.captured_queries) == len(two.captured_queries)


def test_the_page_shows_the_table_and_the_constants(client, ladder, spring, pairs):
    TournamentPointsSettings.objects.create(ladder=ladder, base=50000.0, rank_power=1.0, decay_days=200.0)

    response = client.get("/ladders/chess/tournaments/points/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "<h1>Tournament points</h1>" in page
    assert 'href="/ladders/chess/players/ann/"' in page and 'href="/ladders/chess/tournaments/pairs-cup/"' in page
    assert "50,000 / √teammates" in page and "place<sup>−1</sup>" in page and "200</sup>" in page
    assert "2nd place gets 50% of the winner's points" in page and "halve in about 139 days" in page
    assert 'href="/ladders/chess/tournaments/points/"' in client.get("/ladders/chess/tournaments/").content.decode()


def test_the_page_of_a_ladder_without_finished_tournaments_says_so(client, ladder):
    page = client.get(reverse("tournaments:points", args=["chess"])).content.decode()

    assert "No tournament of this ladder has finished yet" in page
    assert "100,000 / √teammates" in page  # the seed's constants


def test_the_page_of_an_unknown_ladder_is_a_404(client, ladder):
    assert client.get("/ladders/nope/tournaments/points/").status_code == 404
    assert client.post("/ladders/chess/tournaments/points/").status_code == 405


def test_a_players_page_shows_their_tournament_points(client, ladder, cast, spring, pairs):
    page = client.get("/ladders/chess/players/bob/").content.decode()

    section = page[page.index('id="player-tournament-points"') :]
    assert 'href="/ladders/chess/tournaments/points/"' in section
    assert "Pairs cup" in section and "Spring cup" in section and "teams of 2" in section
    assert "Tournament points" not in client.get("/ladders/chess/players/gil/").content.decode()
