"""``python -m ratings.engines``: the what-if calculator's JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(command: str, payload: object | str) -> subprocess.CompletedProcess[str]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "ratings.engines", command], input=text, capture_output=True, text=True, cwd=ROOT
    )


def test_rate_reproduces_spec_albert_and_ben():
    result = run(
        "rate",
        {
            "engine": "tgr",
            "params": {"luck_p": 1},
            "sides": [[{"rating": 1500, "rd": 200}], [{"rating": 1500, "rd": 50}]],
            "placements": [1, 2],
        },
    )

    assert result.returncode == 0, result.stderr
    sides = json.loads(result.stdout)["sides"]
    assert round(sides[0][0]["rating"]) == 1586 and round(sides[0][0]["delta"]) == 86
    assert round(sides[1][0]["rating"]) == 1494
    assert sides[0][0]["expected"] == pytest.approx(0.5)
    assert set(sides[0][0]) >= {"rating", "rd", "volatility", "delta", "expected"}


def test_rate_team_game_with_days_idle_and_params():
    payload = {
        "engine": "glicko2",
        "params": {"tau": 0.4, "period_days": 2, "team_delta": "shared"},
        "sides": [
            [{"rating": 1700, "rd": 60, "volatility": 0.05, "days_idle": 3}, {"rating": 1500, "rd": 200}],
            [{"rating": 1600, "rd": 80}, {"rating": 1550, "rd": 90}, {"rating": 1400, "rd": 300}],
        ],
        "placements": [2, 1],
    }

    output = json.loads(run("rate", payload).stdout)

    assert [len(side) for side in output["sides"]] == [2, 3]
    assert output["sides"][0][0]["delta"] == output["sides"][0][1]["delta"] < 0
    assert output["sides"][0][0]["rd_before"] > 60  # three idle days at σ = 0.05


def test_display_and_composite():
    shown = json.loads(run("display", {"rating": 1600, "rd": 80, "provisional_rd": 100}).stdout)
    assert shown == {
        "gxe": 59.38,
        "tr": pytest.approx(14845.06, abs=0.01),
        "conservative": 1440.0,
        "provisional": False,
    }

    team = json.loads(run("composite", {"players": [{"rating": 1700, "rd": 50}, {"rating": 1300, "rd": 150}]}).stdout)
    assert round(team["rating"]) == 1596 and round(team["rd"], 1) == 47.5

    padded = json.loads(
        run(
            "composite",
            {"players": [{"rating": 1700, "rd": 50}], "pad_to": 2, "null_rating": 1, "null_rd": 350},
        ).stdout
    )
    assert padded["rating"] == pytest.approx(1700 - 120.41, abs=0.01)


@pytest.mark.parametrize(
    ("command", "payload", "message"),
    [
        ("rate", "{not json", "error: stdin: not valid JSON"),
        ("rate", "[]", "error: input must be a JSON object"),
        (
            "rate",
            {"sides": [[{"rating": 1500, "rd": -1}], [{"rating": 1500, "rd": 50}]]},
            "sides[0][0].rd must be above 0",
        ),
        (
            "rate",
            {"sides": [[{"rating": "x", "rd": 1}], [{"rating": 1500, "rd": 50}]]},
            "sides[0][0].rating must be a number",
        ),
        ("rate", {"sides": [[{"rd": 50}], [{"rating": 1500, "rd": 50}]]}, "sides[0][0].rating: required"),
        ("rate", {"sides": [[], [{"rating": 1500, "rd": 50}]]}, "sides[0] must have at least one player"),
        ("rate", {"engine": "go", "sides": []}, "engine: must be one of tgr, glicko1, glicko2, elo"),
        ("rate", {"params": {"luck_p": 0.5}, "sides": []}, "params.luck_p must be between 5/6 and 1"),
        ("rate", {"params": {"speed": 1}, "sides": []}, "params.speed: unknown field"),
        ("rate", {"sides": [[{"rating": 1, "rd": 1}]] * 9, "placements": list(range(1, 10))}, "at most 8 players"),
        ("rate", {"sides": [[{"rating": 1, "rd": 1}]] * 2, "placements": [1, True]}, "placements[1] must be a whole"),
        ("display", {"rating": 1500}, "rd: required"),
        ("display", {"rating": 1500, "rd": 0}, "rd must be above 0"),
        ("composite", {"players": []}, "players: must hold at least one player"),
        ("composite", {"players": [{"rating": 1, "rd": 1}], "pad_to": 9}, "pad_to: must be a whole number from 1"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_field(command, payload, message):
    result = run(command, payload)

    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert message in result.stderr


def test_rate_with_trueskill_reproduces_the_seed_table():
    """docs/rules.md §20: eight newcomers placed 1 to 8; Alice ends at μ 36.771, σ 5.749 (×42 + 450)."""
    result = run(
        "rate",
        {
            "engine": "trueskill",
            "params": {"sc": 0, "beta": 175, "dynamics": 3.5, "draw_probability": 0.1},
            "sides": [[{"rating": 1500, "rd": 350}] for _ in range(8)],
        },
    )

    assert result.returncode == 0, result.stderr
    alice, *_, hillary = json.loads(result.stdout)["sides"]
    assert (round((alice[0]["rating"] - 450) / 42, 3), round(alice[0]["rd"] / 42, 3)) == (36.771, 5.749)
    assert round((hillary[0]["rating"] - 450) / 42, 3) == 13.229


def test_a_bad_trueskill_setting_is_named():
    result = run("rate", {"engine": "trueskill", "params": {"draw_probability": 1}, "sides": [[{"rating": 1500}]]})

    assert result.returncode == 2
    assert "draw_probability must be below 1" in result.stderr
