"""Standings and tie-breaks (tournaments.formats.standings) against examples worked by hand."""

from __future__ import annotations

import pytest

from tournaments.formats import TIEBREAKS, Game, PointsRule, standings

RULE = PointsRule()
RATINGS = {1: 2000.0, 2: 1900.0, 3: 1800.0, 4: 1700.0, 5: 1600.0, 6: 1500.0}
# A six-player Swiss of three rounds.
#   round 1: 1 beat 4, 2 drew 5, 6 beat 3
#   round 2: 1 drew 6, 2 beat 3, 4 beat 5
#   round 3: 2 beat 1, 6 beat 4, 3 drew 5
# Points: 1: 1 + ½ + 0 = 1½   2: ½ + 1 + 1 = 2½   3: 0 + 0 + ½ = ½
#         4: 0 + 1 + 0 = 1    5: ½ + 0 + ½ = 1    6: 1 + ½ + 1 = 2½
SWISS = [
    Game(1, 1, 4, 1.0),
    Game(1, 2, 5, 0.5),
    Game(1, 6, 3, 1.0),
    Game(2, 1, 6, 0.5),
    Game(2, 2, 3, 1.0),
    Game(2, 4, 5, 1.0),
    Game(3, 2, 1, 1.0),
    Game(3, 6, 4, 1.0),
    Game(3, 3, 5, 0.5),
]


def by_id(rows):
    return {row.id: row for row in rows}


def test_standings_every_tiebreak_of_the_six_player_swiss():
    rows = by_id(standings(list(RATINGS), SWISS, RULE, TIEBREAKS, RATINGS))

    # head_to_head, among the entrants tied on points: 2 and 6 never met (0, 0); 4 beat 5 (1, 0).
    # wins: 1: 1, 2: 2, 3: 0, 4: 1, 5: 0, 6: 2.
    # buchholz, the opponents' points:
    #   1: 4 (1) + 6 (2½) + 2 (2½) = 6       2: 5 (1) + 3 (½) + 1 (1½) = 3
    #   3: 6 (2½) + 2 (2½) + 5 (1) = 6       4: 1 (1½) + 5 (1) + 6 (2½) = 5
    #   5: 2 (2½) + 4 (1) + 3 (½) = 4        6: 3 (½) + 1 (1½) + 4 (1) = 3
    # buchholz_cut1, the lowest term dropped: 1: 5, 2: 2½, 3: 5, 4: 4, 5: 3½, 6: 2½.
    # sonneborn_berger, beaten opponents' points plus half the drawn ones':
    #   1: 1 + ½·2½ = 2¼    2: ½·1 + ½ + 1½ = 2½    3: ½·1 = ½
    #   4: 1                5: ½·2½ + ½·½ = 1½      6: ½ + ½·1½ + 1 = 2¼
    # performance, mean opponent rating + 400·(W − L)/N:
    #   1: (1700 + 1500 + 1900)/3 + 0 = 1700      2: (1600 + 1800 + 2000)/3 + 800/3 = 2066.67
    #   3: (1500 + 1900 + 1600)/3 − 800/3 = 1400   4: (2000 + 1600 + 1500)/3 − 400/3 = 1566.67
    #   5: (1900 + 1700 + 1800)/3 − 400/3 = 1666.67 6: (1800 + 2000 + 1700)/3 + 800/3 = 2100
    expected = {
        1: (1.5, 0, 1, 6, 5, 2.25, 1700),
        2: (2.5, 0, 2, 3, 2.5, 2.5, 2066.67),
        3: (0.5, 0, 0, 6, 5, 0.5, 1400),
        4: (1.0, 1, 1, 5, 4, 1, 1566.67),
        5: (1.0, 0, 0, 4, 3.5, 1.5, 1666.67),
        6: (2.5, 0, 2, 3, 2.5, 2.25, 2100),
    }
    for entrant, (points, *tiebreaks) in expected.items():
        assert rows[entrant].points == points
        assert rows[entrant].tiebreaks == pytest.approx(tiebreaks, abs=0.01)
        assert rows[entrant].games == 3
    assert [row.wins for row in rows.values()] == [rows[entrant].tiebreaks[1] for entrant in rows]
    # Ranked: 2 and 6 equal on points, head-to-head, wins and Buchholz; Sonneborn–Berger puts 2 first.
    assert [(row.id, row.rank) for row in standings(list(RATINGS), SWISS, RULE, TIEBREAKS, RATINGS)] == [
        (2, 1),
        (6, 2),
        (1, 3),
        (4, 4),
        (5, 5),
        (3, 6),
    ]


def test_standings_entrants_equal_on_everything_asked_share_a_rank():
    rows = standings(list(RATINGS), SWISS, RULE, ["buchholz"], RATINGS)

    assert [(row.id, row.rank) for row in rows] == [(2, 1), (6, 1), (1, 3), (4, 4), (5, 5), (3, 6)]
    assert [row.tiebreaks for row in rows] == [(3,), (3,), (6,), (5,), (4,), (6,)]


def test_standings_head_to_head_counts_only_games_among_the_tied():
    # 4 and 5 are tied on 1 point and 4 beat 5: 1 against 0. 2 and 6 (2½) never met: 0 and 0.
    rows = by_id(standings(list(RATINGS), SWISS, RULE, ["head_to_head"], RATINGS))

    assert (rows[4].rank, rows[5].rank) == (4, 5)
    assert (rows[2].rank, rows[6].rank) == (1, 1)
    assert rows[1].tiebreaks == (0,), "alone on its points, nobody to count"


def test_standings_a_bye_and_an_absence_are_virtual_opponents_with_ones_own_points():
    # Four players, then 5 joins in round 2 (absent in round 1, worth ½).
    #   round 1: 1 beat 2, 3 drew 4, 5 absent
    #   round 2: 3 beat 1, 5 beat 2, 4 had the bye (1)
    # Points: 1: 1, 2: 0, 3: 1½, 4: ½ + 1 = 1½, 5: ½ + 1 = 1½.
    games = [
        Game(1, 1, 2, 1.0),
        Game(1, 3, 4, 0.5),
        Game(1, 5, None, 0.5, "absent"),
        Game(2, 3, 1, 1.0),
        Game(2, 5, 2, 1.0),
        Game(2, 4, None, 1.0, "bye"),
    ]
    ratings = {1: 1600.0, 2: 1500.0, 3: 1400.0, 4: 1300.0, 5: 1200.0}

    rows = by_id(
        standings(list(ratings), games, RULE, ["buchholz", "buchholz_cut1", "sonneborn_berger", "performance"], ratings)
    )

    # 3: 4 (1½) + 1 (1) = 2½; cut 1½; SB ½·1½ + 1 = 1¾; performance: one draw, one win
    #    against 1300 and 1600: 1450 + 400·1/2 = 1650.
    assert rows[3].tiebreaks == pytest.approx((2.5, 1.5, 1.75, 1650))
    # 4: 3 (1½) + virtual (own 1½) = 3; cut 1½; SB ½·1½ + 1·1½ (a full-point bye) = 2¼;
    #    performance: one draw against 1400 = 1400.
    assert rows[4].tiebreaks == pytest.approx((3, 1.5, 2.25, 1400))
    # 5: virtual (1½) + 2 (0) = 1½; cut 1½; SB ½·1½ (an absence worth a draw) + 1·0 = ¾;
    #    performance: one win against 1500 = 1900.
    assert rows[5].tiebreaks == pytest.approx((1.5, 1.5, 0.75, 1900))
    assert (rows[5].games, rows[5].wins) == (1, 1)
    assert (rows[4].games, rows[4].wins) == (1, 0), "a bye is neither a game nor a win"


def test_standings_forfeit_is_a_win_and_an_unplayed_round():
    games = [Game(1, 1, 2, 1.0, "forfeit"), Game(2, 1, 3, 0.0)]
    ratings = {1: 1500.0, 2: 1500.0, 3: 1700.0}

    rows = by_id(standings([1, 2, 3], games, RULE, ["wins", "buchholz", "performance"], ratings))

    # 1: 1 point; wins 1 (the forfeit); Buchholz: virtual (own 1) + 3 (1) = 2; performance: lost to 1700 = 1300.
    assert (rows[1].points, rows[1].tiebreaks, rows[1].games) == (1.0, (1, 2.0, 1300.0), 1)
    # 2 did not come: a loss, 0 points, no game; Buchholz: virtual (own 0) = 0; performance 0.
    assert (rows[2].points, rows[2].tiebreaks, rows[2].games) == (0.0, (0, 0.0, 0.0), 0)


def test_standings_use_the_organisers_points():
    rule = PointsRule(win=3, draw=1, loss=0, bye=3, absent=1)

    rows = by_id(standings(list(RATINGS), SWISS, rule, [], RATINGS))

    assert {entrant: row.points for entrant, row in rows.items()} == {1: 4, 2: 7, 3: 1, 4: 3, 5: 2, 6: 7}


@pytest.mark.parametrize(
    ("tiebreaks", "message"),
    [(["elo"], "tiebreaks must be among"), (["wins", "wins"], "must not repeat")],
)
def test_standings_reject_an_unknown_or_repeated_tiebreak(tiebreaks, message):
    with pytest.raises(ValueError, match=message):
        standings([1, 2], [], RULE, tiebreaks, {})


def test_standings_a_requested_bye_is_worth_a_draw_whatever_the_bye_is_worth():
    rule = PointsRule(win=3.0, draw=1.0, loss=0.0, bye=3.0)
    games = [Game(1, 1, 2, 1.0), Game(1, 3, None, 0.5, "requested"), Game(2, 3, 1, 1.0), Game(2, 2, None, 1.0, "bye")]

    rows = {row.id: row for row in standings([1, 2, 3], games, rule, ["wins", "sonneborn_berger"], {})}

    assert rule.points(games[1]) == 1.0
    assert (rows[1].points, rows[2].points, rows[3].points) == (3.0, 3.0, 4.0)
    assert rows[3].wins == 1  # a bye is not a win
    # Sonneborn–Berger: beat 1 (3 points) for 1 × 3, and the requested bye's virtual
    # opponent (3's own 4 points) weighed by a draw's share of a win, 1/3.
    assert rows[3].tiebreaks[1] == pytest.approx(3 + 4 / 3)


def test_a_requested_bye_has_no_opponent():
    with pytest.raises(ValueError, match="a 'requested' game must not have an opponent b"):
        Game(1, 1, 2, 0.5, "requested")


def test_standings_count_losses_over_the_board_and_by_forfeit_not_draws():
    games = [Game(1, 1, 2, 0.0), Game(2, 1, 3, 0.5), Game(3, 3, 1, 1.0, "forfeit"), Game(4, 2, None, 1.0, "bye")]

    rows = {row.id: row for row in standings([1, 2, 3], games, RULE, [], {})}

    assert (rows[1].wins, rows[1].losses) == (0, 2)
    assert (rows[2].wins, rows[2].losses) == (1, 0)
    assert (rows[3].wins, rows[3].losses) == (1, 0)
