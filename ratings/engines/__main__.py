"""What-if calculator: ``python -m ratings.engines rate|display|composite`` (JSON in, JSON out).

Reads one JSON object on standard input and prints the answer as JSON. Bad JSON or a bad
value exits with status 2 and one line on standard error naming the field.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from ratings.engines import ENGINES, Params, RatingState, get_engine
from ratings.engines.display import display
from ratings.engines.teams import composite, pad
from ratings.engines.values import MAX_PLAYERS, SECONDS_PER_DAY, check_number

PARAM_NAMES = (
    "sc",
    "luck_p",
    "rd_max",
    "c",
    "tau",
    "k",
    "initial_rd",
    "null_rating",
    "team_delta",
    "period_days",
    "rd_min",
    "beta",
    "dynamics",
    "draw_probability",
)
PLAYER_FIELDS = ("rating", "rd", "volatility", "days_idle")


class InputError(ValueError):
    """A problem with the input, already phrased for the one line on stderr."""


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{name} must be a JSON object, got {type(value).__name__}")
    return value


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(f"{name} must be a JSON array, got {type(value).__name__}")
    return value


def _unknown(data: dict[str, Any], allowed: Sequence[str], name: str) -> None:
    extra = sorted(set(data) - set(allowed))
    if extra:
        raise InputError(f"{name}{extra[0]}: unknown field (allowed: {', '.join(allowed)})")


def _number(data: dict[str, Any], key: str, name: str, *, default: float | None = None, **rules: Any) -> float:
    if key not in data:
        if default is None:
            raise InputError(f"{name}{key}: required")
        return default
    try:
        return check_number(f"{name}{key}", data[key], **rules)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _player(value: Any, name: str) -> RatingState:
    data = _object(value, name)
    _unknown(data, PLAYER_FIELDS, f"{name}.")
    days_idle = _number(data, "days_idle", f"{name}.", default=0.0, minimum=0.0)
    return RatingState(
        rating=_number(data, "rating", f"{name}."),
        rd=_number(data, "rd", f"{name}.", positive=True),
        volatility=_number(data, "volatility", f"{name}.", default=0.06, positive=True),
        rd_as_of=-days_idle * SECONDS_PER_DAY,
    )


def rate(data: dict[str, Any]) -> dict[str, Any]:
    """One game through ``Engine.rate``; players' ``days_idle`` become their ``rd_as_of``."""
    _unknown(data, ("engine", "params", "sides", "placements"), "")
    engine_name = data.get("engine", "tgr")
    if engine_name not in ENGINES:
        raise InputError(f"engine: must be one of {', '.join(ENGINES)}, got {engine_name!r}")
    raw_params = _object(data.get("params", {}), "params")
    _unknown(raw_params, PARAM_NAMES, "params.")
    try:
        params = Params(**raw_params)
    except (TypeError, ValueError) as exc:
        raise InputError(f"params.{exc}") from None
    if "sides" not in data:
        raise InputError("sides: required")
    sides = [
        [_player(player, f"sides[{i}][{j}]") for j, player in enumerate(_list(side, f"sides[{i}]"))]
        for i, side in enumerate(_list(data["sides"], "sides"))
    ]
    placements = data.get("placements", list(range(1, len(sides) + 1)))
    for index, place in enumerate(_list(placements, "placements")):
        if isinstance(place, bool) or not isinstance(place, int):
            raise InputError(f"placements[{index}] must be a whole number of at least 1, got {place!r}")
    try:
        result = get_engine(engine_name, params).rate(sides, placements, 0.0)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return {
        "engine": engine_name,
        "sides": [
            [
                {
                    "rating": player.rating,
                    "rd": player.rd,
                    "volatility": player.volatility,
                    "delta": player.delta,
                    "expected": player.expected,
                    "score": player.score,
                    "rd_before": player.rd_at_game,
                }
                for player in side
            ]
            for side in result.sides
        ],
        "composites": [{"rating": rating, "rd": rd} for rating, rd in result.composites],
    }


def show(data: dict[str, Any]) -> dict[str, Any]:
    """GXE, TR, conservative and provisional status (docs/rules.md §10)."""
    _unknown(data, ("rating", "rd", "provisional_rd"), "")
    values = display(
        _number(data, "rating", ""),
        _number(data, "rd", "", positive=True),
        _number(data, "provisional_rd", "", default=100.0, positive=True),
    )
    return values._asdict()


def team(data: dict[str, Any]) -> dict[str, Any]:
    """A team's composite after padding with null players (docs/rules.md §8)."""
    _unknown(data, ("players", "pad_to", "null_rating", "null_rd"), "")
    players = _list(data.get("players"), "players")
    if not players:
        raise InputError("players: must hold at least one player, got an empty team")
    ratings, rds = [], []
    for index, value in enumerate(players):
        player = _object(value, f"players[{index}]")
        _unknown(player, ("rating", "rd"), f"players[{index}].")
        ratings.append(_number(player, "rating", f"players[{index}]."))
        rds.append(_number(player, "rd", f"players[{index}].", positive=True))
    pad_to = data.get("pad_to", len(players))
    if isinstance(pad_to, bool) or not isinstance(pad_to, int) or not len(players) <= pad_to <= MAX_PLAYERS:
        raise InputError(
            f"pad_to: must be a whole number from {len(players)} (the team's size) to {MAX_PLAYERS}, got {pad_to!r}"
        )
    null_rating = _number(data, "null_rating", "", default=1.0)
    null_rd = _number(data, "null_rd", "", default=350.0, positive=True)
    ratings, rds = pad(ratings, rds, pad_to, null_rating=null_rating, null_rd=null_rd)
    rating, rd = composite(ratings, rds)
    return {"rating": rating, "rd": rd, "size": pad_to}


COMMANDS = {"rate": rate, "display": show, "composite": team}


def main(argv: Sequence[str] | None = None) -> int:
    """Read JSON on stdin, print JSON on stdout; 2 and one stderr line on bad input."""
    parser = argparse.ArgumentParser(
        prog="python -m ratings.engines", description="Rating what-if calculator: JSON on stdin, JSON on stdout."
    )
    parser.add_argument("command", choices=sorted(COMMANDS), help="rate a game, display values, or a team composite")
    args = parser.parse_args(argv)
    try:
        try:
            data = json.loads(sys.stdin.read())
        except json.JSONDecodeError as exc:
            raise InputError(f"stdin: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
        answer = COMMANDS[args.command](_object(data, "input"))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    json.dump(answer, sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
