"""The backtest lab (``ratings.backtest``): metrics by hand, replay order, the split, CSV, CLI.

Pure and fast: no database. Oracles are hand computations from the formulas (Glickman 1999
for the one update, the definitions for the metrics), never numbers printed by the code.
"""

from __future__ import annotations

import io
import json
import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from ratings.backtest.data import DataError, Match, index_at, parse_matches, split_index
from ratings.backtest.metrics import accuracy, brier, ece, log_loss, paired_difference, reliability
from ratings.backtest.replay import replay
from ratings.backtest.tracking import EVERY, WINDOWS
from ratings.engines import Params, get_engine

ROOT = Path(__file__).resolve().parents[2]
FOOTBALL = ROOT / "tests" / "fixtures" / "intl_football_first_2000.csv"


# Metrics ---------------------------------------------------------------------------------
def test_log_loss_of_known_predictions():
    assert log_loss([0.8, 0.4], [1.0, 0.0]) == pytest.approx((-math.log(0.8) - math.log(0.6)) / 2)


def test_log_loss_counts_a_draw_as_half_a_win_and_clips_certainty():
    assert log_loss([0.5], [0.5]) == pytest.approx(math.log(2))
    assert log_loss([0.0], [1.0]) == pytest.approx(-math.log(1e-15))
    assert log_loss([1.0], [0.0]) == pytest.approx(-math.log(1e-15), rel=1e-4)  # 1 − (1 − 1e-15) rounds


def test_brier_and_accuracy_by_hand():
    assert brier([0.8, 0.4], [1.0, 0.0]) == pytest.approx((0.2**2 + 0.4**2) / 2)
    # right, right, wrong, a 50% prediction (half), a draw (half)
    assert accuracy([0.8, 0.4, 0.7, 0.5, 0.9], [1.0, 0.0, 0.0, 1.0, 0.5]) == pytest.approx(0.6)


def test_ece_of_a_constructed_case():
    probabilities = [0.15] * 4 + [0.85] * 6
    outcomes = [1.0, 0.0, 0.0, 0.0] + [1.0] * 6

    bins = reliability(probabilities, outcomes)

    assert [(row.low, row.n) for row in bins] == [(0.1, 4), (0.8, 6)]
    assert bins[0].observed == pytest.approx(0.25) and bins[1].observed == pytest.approx(1.0)
    # |0.25 − 0.15| on 4 matches and |1 − 0.85| on 6: (0.4 + 0.9) / 10
    assert ece(probabilities, outcomes) == pytest.approx(0.13)


def test_certain_prediction_falls_in_the_last_bin():
    assert [row.high for row in reliability([1.0, 0.0], [1.0, 0.0])] == [0.1, 1.0]


def test_paired_standard_error_matches_a_direct_computation():
    first, second, outcomes = [0.8, 0.6, 0.5, 0.3], [0.5, 0.5, 0.5, 0.5], [1.0, 1.0, 0.0, 0.5]
    d = [
        -math.log(0.8) - math.log(2),
        -math.log(0.6) - math.log(2),
        0.0,
        -(math.log(0.3) + math.log(0.7)) / 2 - math.log(2),
    ]

    difference = paired_difference(first, second, outcomes)

    assert difference.mean == pytest.approx(statistics.fmean(d))
    assert difference.se == pytest.approx(statistics.stdev(d) / math.sqrt(4))


def test_metrics_refuse_mismatched_lengths():
    with pytest.raises(ValueError, match="outcomes must match probabilities: 2 predictions, got 1"):
        log_loss([0.5, 0.5], [1.0])


# Replay ----------------------------------------------------------------------------------
def _glicko_win(rating: float, rd: float) -> tuple[float, float]:
    """The winner's new (rating, RD) of 1500/350 against 1500/350, by Glickman 1999 step 2."""
    q = math.log(10) / 400
    g = 1 / math.sqrt(1 + 3 * q**2 * rd**2 / math.pi**2)
    rd_new2 = 1 / (1 / rd**2 + q**2 * g**2 * 0.25)
    return rating + q * rd_new2 * g * 0.5, math.sqrt(rd_new2)


def test_replay_predicts_before_the_update():
    # TGR without luck weighting or growth is Glicko's one-game update (docs/rules.md §3).
    engine = get_engine("tgr", Params(sc=0.0, luck_p=1.0))
    matches = [Match(0.0, "ann", "bob", 1.0), Match(0.0, "ann", "bob", 1.0)]

    predictions = replay(matches, engine)

    winner, rd = _glicko_win(1500.0, 350.0)
    loser = 3000.0 - winner  # symmetric: the loser drops as far as the winner rises
    q = math.log(10) / 400
    big_g = 1 / math.sqrt(1 + 3 * q**2 * (2 * rd**2) / math.pi**2)
    second = 1 / (1 + 10 ** (-big_g * (winner - loser) / 400))
    assert predictions.probabilities == pytest.approx([0.5, second])
    assert predictions.favourites == pytest.approx([1500.0, winner])


def test_replay_scores_only_from_score_from_but_learns_from_everything():
    engine = get_engine("tgr", Params(sc=0.0, luck_p=1.0))
    matches = [Match(0.0, "ann", "bob", 1.0), Match(0.0, "ann", "bob", 0.5)]

    predictions = replay(matches, engine, score_from=1)

    assert predictions.outcomes == [0.5]
    assert predictions.probabilities[0] > 0.5


# Split -----------------------------------------------------------------------------------
def _at(*times: float) -> list[Match]:
    return [Match(at, f"p{index}", f"q{index}", 1.0) for index, at in enumerate(times)]


def test_split_takes_the_last_fifth():
    assert split_index(_at(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)) == 8


def test_split_snaps_back_to_a_change_of_time():
    assert split_index(_at(0, 1, 2, 3, 4, 5, 6, 8, 8, 8)) == 7


def test_split_refuses_when_nothing_is_left_to_train_on():
    with pytest.raises(DataError, match="cannot split 5 matches"):
        split_index(_at(1, 1, 1, 1, 1))


def test_train_until_starts_at_the_first_match_on_or_after_it():
    matches = _at(0, 10, 10, 20)
    assert index_at(matches, 10) == 1
    with pytest.raises(DataError, match="no match to score"):
        index_at(matches, 21)
    with pytest.raises(DataError, match="no match to train on"):
        index_at(matches, 0)


# CSV -------------------------------------------------------------------------------------
HEADER = "when_utc_seconds,player_a,player_b,score_a\n"


def _parse(body: str, header: str = HEADER) -> list[Match]:
    return parse_matches(io.StringIO(header + body), name="x.csv")


def test_csv_keeps_file_order_and_reads_scores():
    matches = _parse("5,b,a,0.5\n5,a,c,1\n7,c,b,0\n")
    assert matches == [Match(5.0, "b", "a", 0.5), Match(5.0, "a", "c", 1.0), Match(7.0, "c", "b", 0.0)]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("5,a,b,1\n6,a,b,2\n", "x.csv:3: score_a must be 1, 0.5 or 0, got '2'"),
        ("soon,a,b,1\n", "x.csv:2: when_utc_seconds must be a number, got 'soon'"),
        ("nan,a,b,1\n", "x.csv:2: when_utc_seconds must be a finite number, got 'nan'"),
        ("9,a,b,1\n8,a,b,1\n", "x.csv:3: when_utc_seconds goes back in time (8 after 9)"),
        ("5,a,a,1\n", "x.csv:2: player_a and player_b must differ, got 'a' twice"),
        ("5,,b,1\n", "x.csv:2: player_a must not be empty"),
        ("5,a,b\n", "x.csv:2: expected 4 fields (when_utc_seconds,player_a,player_b,score_a), got 3"),
        ("", "x.csv: no matches after the header"),
    ],
)
def test_csv_errors_name_file_line_and_field(body, message):
    with pytest.raises(DataError) as error:
        _parse(body)
    assert str(error.value) == message


def test_csv_refuses_another_header():
    with pytest.raises(DataError, match=r"^x.csv:1: the header must be when_utc_seconds,player_a"):
        _parse("5,a,b,1\n", header="time,a,b,score\n")


# CLI -------------------------------------------------------------------------------------
def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ratings.backtest", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_cli_json_shape_on_the_football_sample():
    result = run("--csv", str(FOOTBALL), "--engine", "glicko1", "--params", '{"c": 10}', "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"] == "glicko1"
    assert Params(**report["params"]) == Params(c=10.0)
    assert set(report["metrics"]) == {"log_loss", "brier", "accuracy", "ece", "n"}
    assert report["metrics"]["n"] == 2000 - split_index(parse_matches(FOOTBALL.open()))
    assert report["baselines"]["always_50"]["metrics"]["log_loss"] == pytest.approx(math.log(2))
    assert report["baselines"]["glicko2_package"]["metrics"]["n"] == report["metrics"]["n"]
    assert set(report["calibration"]) == {"slope", "intercept"}
    # a ≈ home team: the fitted edge of the first-named side is positive (home advantage)
    assert report["calibration"]["intercept"] > 0
    assert report["calibrated"]["metrics"]["n"] == report["metrics"]["n"]
    assert report["tracked"]["metrics"]["n"] == report["metrics"]["n"]  # recalibrated as the results came
    # 2,000 results leave a validation slice too short for every window: half of it is the memory
    assert report["tracking"]["window"] < min(WINDOWS) and report["tracking"]["every"] == EVERY
    assert report["tracking"]["last"]["intercept"] > 0


def test_cli_tune_names_a_tuned_engine_and_train_until_moves_the_split():
    result = run("--csv", str(FOOTBALL), "--engine", "elo", "--tune", "--train-until", "1915-01-01", "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"] == "elo"
    Params(**report["params"])
    assert report["calibrated"]["log_loss_minus"]["glicko2_package"]["se"] > 0
    assert report["tracked"]["log_loss_minus"]["elo_k32"]["se"] > 0
    assert report["split"]["test_from_utc_seconds"] >= -1735689600  # 1915-01-01
    assert re.search(r"tune: (\d+)/\1 parameter sets\n$", result.stderr)  # the grid, extended where it must be


def test_cli_tune_chooses_the_home_edge_and_edge_reproduces_its_figures():
    tuned = run("--csv", str(FOOTBALL), "--engine", "tgr", "--tune", "--json")

    assert tuned.returncode == 0, tuned.stderr
    report = json.loads(tuned.stdout)
    assert report["edge"] > 0  # a is the home team in the football file
    assert report["engines"][0]["edge"] == report["edge"]
    params = {key: value for key, value in report["params"].items() if value is not None}
    again = run(
        "--csv",
        str(FOOTBALL),
        "--engine",
        "tgr",
        "--params",
        json.dumps(params),
        "--edge",
        str(report["edge"]),
        "--json",
    )
    assert again.returncode == 0, again.stderr
    replayed = json.loads(again.stdout)
    assert replayed["edge"] == report["edge"]
    assert replayed["metrics"] == pytest.approx(report["metrics"], abs=1e-12)
    text = run("--csv", str(FOOTBALL), "--engine", "tgr", "--tune")
    assert f"--edge {report['edge']:g}" in text.stdout and "edge: rating points the side named first" in text.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--csv", "missing.csv"), "error: missing.csv: cannot read the file"),
        (("--csv", str(FOOTBALL), "--edge", "home"), "error: --edge must be a number of rating points, got 'home'"),
        (("--csv", str(FOOTBALL), "--edge", "nan"), "error: --edge must be between -1000 and 1000 rating points"),
        (("--csv", str(FOOTBALL), "--edge", "5000"), "error: --edge must be between -1000 and 1000 rating points"),
        (("--csv", str(FOOTBALL), "--tune", "--edge", "50"), "error: --tune chooses the edge"),
        (("--csv", str(FOOTBALL), "--params", "[1]"), "error: --params must be a JSON object, got list"),
        (("--csv", str(FOOTBALL), "--params", '{"k": -1}'), "error: --params: k must be above 0, got -1"),
        (("--csv", str(FOOTBALL), "--train-until", "someday"), "error: --train-until must be an ISO date"),
    ],
)
def test_cli_bad_input_exits_non_zero_with_one_line(args, message):
    result = run(*args)

    assert result.returncode == 2
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_backtest_imports_no_django():
    code = "import sys, ratings.backtest.__main__; print(sorted(m for m in sys.modules if m.startswith('django')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "[]"
