"""Team and free-for-all backtests (``ratings.backtest`` on games, issue 30).

Pure and fast: small synthetic files in tmp dirs, no shared data. Oracles: the formats as
documented, the engine's own ``win_probability`` asked before each update, Elo's formula
by hand, and a tuner that must find the setting the data was generated to favour.
"""

from __future__ import annotations

import io
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from ratings.backtest.data import DataError, Game, as_matches, parse_games, read_games, split_index
from ratings.backtest.games import (
    EVEN_TEAMS,
    FREE_FOR_ALL,
    ONE_V_ONE,
    UNEVEN_TEAMS,
    game_kind,
    metrics_by_type,
    replay_games,
    team_mean_elo,
)
from ratings.backtest.games_run import ELO_NAME, TRUESKILL_NAME, games_backtest_report, games_tune_report
from ratings.backtest.games_tune import tune_games
from ratings.backtest.peers import OPENSKILL, TRUESKILL, peer_replay
from ratings.backtest.run import HALF_NAME
from ratings.engines import ENGINES, Params, RatingState, get_engine

ROOT = Path(__file__).resolve().parents[2]
TEAM_HEADER = "when_utc_seconds,side_a,side_b,score_a\n"
FFA_HEADER = "when_utc_seconds,sides,placements\n"


def _games(text: str) -> list[Game]:
    return parse_games(io.StringIO(text), name="x.csv")


def _synthetic(count: int = 600, *, seed: int = 3, players: int = 24, shapes: int = 1) -> list[Game]:
    """Games drawn from a known model: each player's fixed strength, a side's the sum of its members'."""
    rng = random.Random(seed)
    strength = {str(i): rng.gauss(0.0, 1.0) for i in range(players)}
    games = []
    for index in range(count):
        shape = index % shapes
        if shape == 0:  # 2 v 2
            names = rng.sample(sorted(strength), 4)
            sides = (tuple(names[:2]), tuple(names[2:]))
        elif shape == 1:  # 1 v 2
            names = rng.sample(sorted(strength), 3)
            sides = ((names[0],), tuple(names[1:]))
        else:  # a free-for-all of three
            names = rng.sample(sorted(strength), 3)
            sides = tuple((name,) for name in names)
        noisy = [sum(strength[p] for p in side) + rng.gauss(0.0, 1.0) for side in sides]
        order = sorted(range(len(sides)), key=lambda i: -noisy[i])
        placements = [0] * len(sides)
        for place, i in enumerate(order, start=1):
            placements[i] = place
        games.append(Game(float(index * 3600), sides, tuple(placements)))
    return games


def _write(games: list[Game], path: Path) -> Path:
    """``games`` in the free-for-all format, or the team format when every game has two sides."""
    if all(len(game.sides) == 2 for game in games):
        scores = {(1, 2): "1", (2, 1): "0", (1, 1): "0.5"}
        rows = [f"{g.at:.0f},{'+'.join(g.sides[0])},{'+'.join(g.sides[1])},{scores[g.placements]}" for g in games]
        path.write_text(TEAM_HEADER + "\n".join(rows) + "\n")
    else:
        rows = [
            f"{g.at:.0f},{'|'.join('+'.join(side) for side in g.sides)},{'|'.join(map(str, g.placements))}"
            for g in games
        ]
        path.write_text(FFA_HEADER + "\n".join(rows) + "\n")
    return path


# Reading ---------------------------------------------------------------------------------
def test_every_format_reads_as_games_in_file_order():
    one = _games("when_utc_seconds,player_a,player_b,score_a\n5,a,b,0\n6,b,c,0.5\n")
    teams = _games(TEAM_HEADER + "5,11+12,31+32,0\n5,33,5+6,1\n")
    free = _games(FFA_HEADER + "9,1+2|3|4+5,1|2|2\n9,a|b,2|1\n")

    assert one == [Game(5.0, (("a",), ("b",)), (2, 1)), Game(6.0, (("b",), ("c",)), (1, 1))]
    assert teams == [
        Game(5.0, (("11", "12"), ("31", "32")), (2, 1)),
        Game(5.0, (("33",), ("5", "6")), (1, 2)),
    ]
    assert free == [Game(9.0, (("1", "2"), ("3",), ("4", "5")), (1, 2, 2)), Game(9.0, (("a",), ("b",)), (2, 1))]


def test_a_file_of_one_player_a_side_takes_the_one_v_one_path(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text(TEAM_HEADER + "5,a,b,1\n6,b,c,0.5\n")

    matches = as_matches(read_games(path))

    assert matches is not None and [(m.player_a, m.player_b, m.score_a) for m in matches] == [
        ("a", "b", 1.0),
        ("b", "c", 0.5),
    ]
    assert as_matches(_games(TEAM_HEADER + "5,a,b+c,1\n")) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (TEAM_HEADER + "5,1+2,3+1,1\n", "x.csv:2: player '1' appears twice in one game"),
        (TEAM_HEADER + "5,1+2,3+4,1\n5,1+,3+4,1\n", "x.csv:3: side_a must be player ids joined by +, got '1+'"),
        (TEAM_HEADER + "5,1+2,,1\n", "x.csv:2: side_b must be player ids joined by +, got ''"),
        (TEAM_HEADER + "5,1+2,3+4,2\n", "x.csv:2: score_a must be 1, 0.5 or 0, got '2'"),
        (TEAM_HEADER + "9,1+2,3+4,1\n8,1+2,3+4,1\n", "x.csv:3: when_utc_seconds goes back in time (8 after 9)"),
        (TEAM_HEADER + "5,1+2,3+4\n", "x.csv:2: expected 4 fields (when_utc_seconds,side_a,side_b,score_a), got 3"),
        (FFA_HEADER + "5,1|2|3,1|2\n", "x.csv:2: placements must give one place per side: 3 sides, got 2 places"),
        (FFA_HEADER + "5,1+2,1\n", "x.csv:2: sides must hold at least 2 sides separated by |, got '1+2'"),
        (FFA_HEADER + "5,1||3,1|2|3\n", "x.csv:2: side 2 of sides must be player ids joined by +, got ''"),
        (FFA_HEADER + "5,1|2|1,1|2|3\n", "x.csv:2: player '1' appears twice in one game"),
        (FFA_HEADER + "5,1|2,1|0\n", "x.csv:2: each place must be a whole number of at least 1, got '0'"),
        (FFA_HEADER + "5,1|2,1|1.5\n", "x.csv:2: each place must be a whole number of at least 1, got '1.5'"),
        (FFA_HEADER + "5,1+2+3|4+5+6|7+8+9,1|2|3\n", "x.csv:2: a game holds at most 8 players, got 9"),
        (FFA_HEADER + "soon,1|2,1|2\n", "x.csv:2: when_utc_seconds must be a number, got 'soon'"),
        (FFA_HEADER, "x.csv: no games after the header"),
        ("time,sides\n5,1|2\n", "x.csv:1: the header must be when_utc_seconds,player_a,player_b,score_a or "),
    ],
)
def test_bad_rows_stop_with_file_line_and_what(text, message):
    with pytest.raises(DataError) as error:
        _games(text)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


# Replay ----------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_each_prediction_is_the_engines_own_before_the_update(engine):
    games = _synthetic(60, shapes=3)
    live = get_engine(engine, Params(team_delta="shared") if engine != "trueskill" else Params())

    scored = replay_games(games, live)

    states: dict[str, RatingState] = {}
    expected = []
    for at, sides, placements in games:
        new = RatingState(1500.0, live.params.initial_rd, 0.06, at)
        lineup = [tuple(states.get(name, new) for name in side) for side in sides]
        expected += [
            live.win_probability(lineup[i], lineup[j], at) for i in range(len(sides)) for j in range(i + 1, len(sides))
        ]
        for side, rated in zip(sides, live.rate(lineup, placements, at).sides, strict=True):
            states.update({name: player.after for name, player in zip(side, rated, strict=True)})
    assert scored.predictions.probabilities == expected
    assert len(scored.types) == 20 + 20 + 20 * 3


def test_games_are_typed_one_v_one_even_uneven_and_free_for_all():
    assert game_kind((("a",), ("b",))) == ONE_V_ONE
    assert game_kind((("a", "b"), ("c", "d"))) == EVEN_TEAMS
    assert game_kind((("a",), ("c", "d"))) == UNEVEN_TEAMS
    assert game_kind((("a",), ("b",), ("c", "d"))) == FREE_FOR_ALL

    groups = metrics_by_type(
        [0.8, 0.5, 0.6, 0.3], [1.0, 0.0, 1.0, 0.0], [FREE_FOR_ALL, ONE_V_ONE, FREE_FOR_ALL, EVEN_TEAMS]
    )

    assert list(groups) == [ONE_V_ONE, EVEN_TEAMS, FREE_FOR_ALL]  # report order, types present only
    assert groups[FREE_FOR_ALL]["n"] == 2
    assert groups[FREE_FOR_ALL]["log_loss"] == pytest.approx(-(math.log(0.8) + math.log(0.6)) / 2)


def test_team_mean_elo_by_hand():
    games = [
        Game(0.0, (("a", "b"), ("c", "d")), (1, 2)),
        Game(1.0, (("a", "c"), ("e",)), (2, 1)),
        Game(2.0, (("a",), ("b",), ("e",)), (1, 2, 2)),
    ]

    scored = team_mean_elo(games)

    # game 1: equal means, a and b +16, c and d −16
    # game 2: (1516 + 1484)/2 = 1500 against 1500: a and c −16, e +16
    # game 3: a 1500, b 1516, e 1516; each side's move is K·mean(s − E) over the other two
    e_ab = 1 / (1 + 10 ** (16 / 400))
    assert scored.predictions.probabilities == pytest.approx([0.5, 0.5, e_ab, e_ab, 0.5])
    assert scored.predictions.outcomes == [1.0, 0.0, 1.0, 1.0, 0.5]
    assert scored.types == [EVEN_TEAMS, UNEVEN_TEAMS, FREE_FOR_ALL, FREE_FOR_ALL, FREE_FOR_ALL]


# Tuning and reports ----------------------------------------------------------------------
def test_the_tuner_picks_the_setting_the_data_favours():
    games = _synthetic(900, players=30)
    test_start = split_index(games)
    grids = {"elo": {"team_delta": ("own",), "k": (0.5, 32.0)}}

    tuned = tune_games(games, test_start, engines=["elo"], grids=grids, extend=0)

    # fixed strengths and 900 games: K = 0.5 hardly leaves 1500, K = 32 learns them
    assert tuned[0].params == {"team_delta": "own", "k": 32.0}
    report = games_backtest_report(games, "elo", Params(k=0.5), test_start)
    assert tuned[0].probabilities and len(tuned[0].probabilities) == report["metrics"]["n"]
    again = games_backtest_report(games, "elo", Params(k=32.0), test_start)
    assert again["metrics"]["log_loss"] < report["metrics"]["log_loss"]


def test_a_games_report_holds_the_baselines_and_every_type(tmp_path):
    games = _synthetic(300, shapes=3)
    test_start = split_index(games)

    report = games_backtest_report(games, "glicko1", Params(c=10.0), test_start)

    baselines = {ELO_NAME, HALF_NAME} | ({TRUESKILL_NAME} if "trueskill" in ENGINES else set())
    assert set(report["baselines"]) == baselines
    assert set(report["log_loss_minus"]) == baselines
    assert report["baselines"][HALF_NAME]["metrics"]["log_loss"] == pytest.approx(math.log(2))
    assert list(report["by_type"]) == [EVEN_TEAMS, UNEVEN_TEAMS, FREE_FOR_ALL]
    assert report["by_type"][FREE_FOR_ALL]["n"] == 3 * report["by_type"][EVEN_TEAMS]["n"]
    assert report["metrics"]["n"] == report["split"]["test_pairs"] == sum(m["n"] for m in report["by_type"].values())
    assert {"calibration", "calibrated", "tracking", "tracked", "bands", "reliability", "split"} <= set(report)
    assert Params(**report["params"]) == Params(c=10.0)


def test_a_games_tuning_reports_each_engines_own_figures():
    games = _synthetic(300, shapes=2)
    grids = {
        "glicko1": {"team_delta": ("own", "shared"), "c": (5.0, 20.0)},
        "elo": {"team_delta": ("own",), "k": (16.0, 32.0)},
    }
    import ratings.backtest.games_tune as games_tune

    original = games_tune.GAME_GRIDS
    games_tune.GAME_GRIDS = grids  # the report's default grids, kept small
    try:
        report = games_tune_report(games, split_index(games), engines=["glicko1", "elo"])
    finally:
        games_tune.GAME_GRIDS = original

    rows = report["engines"]
    assert {row["engine"] for row in rows} == {"glicko1", "elo"}
    assert rows[0]["validation"]["log_loss"] <= rows[1]["validation"]["log_loss"]
    assert report["engine"] == rows[0]["engine"] and report["by_type"] == rows[0]["by_type"]
    assert rows[0]["metrics"] != rows[1]["metrics"]
    assert all(set(row["by_type"]) == {EVEN_TEAMS, UNEVEN_TEAMS} for row in rows)


@pytest.mark.parametrize("peer", [TRUESKILL, OPENSKILL])
def test_a_package_predicts_before_its_update(peer):
    games = [Game(0.0, (("a", "b"), ("c", "d")), (1, 2)), Game(1.0, (("a", "c"), ("b", "d")), (1, 2))]

    predictions = peer_replay(games, peer, 25.0 / 6.0, 25.0 / 300.0)

    assert predictions.probabilities[0] == pytest.approx(0.5)  # four newcomers
    assert predictions.probabilities[1] == pytest.approx(0.5)  # a winner and a loser a side
    assert predictions.outcomes == [1.0, 1.0]


# CLI -------------------------------------------------------------------------------------
def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ratings.backtest", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_cli_scores_a_free_for_all_file_by_type(tmp_path):
    path = _write(_synthetic(300, shapes=3), tmp_path / "ffa.csv")

    result = run("--csv", str(path), "--engine", "tgr", "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report["by_type"]) == [EVEN_TEAMS, UNEVEN_TEAMS, FREE_FOR_ALL]
    assert report["baselines"][ELO_NAME]["metrics"]["n"] == report["metrics"]["n"]
    text = run("--csv", str(path), "--engine", "tgr")
    assert "tgr by game type:" in text.stdout and "  Free-for-all" in text.stdout


def test_cli_tunes_a_team_file_with_the_packages(tmp_path):
    path = _write(_synthetic(240), tmp_path / "teams.csv")

    result = run("--csv", str(path), "--tune", "--engine", "glicko1", "--packages", "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"] == "glicko1" and report["params"]["team_delta"] in ("own", "shared", "bayes")
    for peer in (TRUESKILL, OPENSKILL):
        assert set(report["baselines"][peer]["params"]) == {"beta", "tau"}
        assert report["log_loss_minus"][peer]["se"] > 0


@pytest.mark.parametrize(
    ("args", "body", "message"),
    [
        (("--edge", "50"), TEAM_HEADER + "5,1+2,3+4,1\n", "error: --edge is for 1 v 1 files"),
        ((), FFA_HEADER + "5,1|1,1|2\n", "error: "),
        (("--packages",), TEAM_HEADER + "5,1,2,1\n6,1,2,0\n", "error: --packages compares team games"),
    ],
)
def test_cli_bad_input_on_games_exits_2_with_one_line(tmp_path, args, body, message):
    path = tmp_path / "bad.csv"
    path.write_text(body)

    result = run("--csv", str(path), *args)

    assert result.returncode == 2
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1 and result.stdout == ""


def test_an_open_end_grows_one_step_from_the_best_set_only():
    """A line search: one new point per open end the best set sits at, the other values held."""
    from ratings.backtest.games_tune import _extended

    axes = {"team_delta": ["own", "shared", "bayes"], "sc": [5.0, 20.0], "initial_rd": [175.0, 350.0]}

    points = _extended(axes, {"team_delta": "bayes", "sc": 20.0, "initial_rd": 175.0})

    assert points == [
        {"team_delta": "bayes", "sc": 40.0, "initial_rd": 175.0},
        {"team_delta": "bayes", "sc": 20.0, "initial_rd": 125.0},
    ]
    assert axes["sc"] == [5.0, 20.0, 40.0] and axes["initial_rd"] == [175.0, 350.0, 125.0]
    assert axes["team_delta"] == ["own", "shared", "bayes"]
    # A best set inside every axis grows nothing.
    assert _extended(axes, {"team_delta": "own", "sc": 20.0, "initial_rd": 175.0}) == []
