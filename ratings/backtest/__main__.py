"""``python -m ratings.backtest --csv FILE [--engine E] [--params JSON] [--edge POINTS] [--tune] …``.

Replays the results of FILE in file order and scores each game's prediction before its
update on the last 20% of games (or from ``--train-until``): the engine and the baselines.
FILE holds 1 v 1 matches, two teams (sides of ids joined by +) or free-for-alls (sides
separated by | with their places), as ``ratings.backtest.data`` describes. ``--tune`` first
chooses each engine's parameters on the earlier part; for 1 v 1 matches also the edge of
the side named first in each row (a home team, chess's white), which ``--edge`` sets by hand.
``--packages`` adds the tuned trueskill and openskill packages to a team file's report.
Bad input exits with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ratings.backtest.data import DataError, Timed, as_matches, index_at, read_games, split_index
from ratings.backtest.games import TYPE_LABELS
from ratings.backtest.games_run import games_backtest_report, games_tune_report
from ratings.backtest.peers import MissingPackage, require
from ratings.backtest.run import backtest_report, tune_report
from ratings.backtest.tune import TUNED, stderr_progress
from ratings.engines import ENGINES, Params


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ratings.backtest", description=__doc__.split("\n\n")[1])
    parser.add_argument(
        "--csv",
        required=True,
        help="results with one of the headers when_utc_seconds,player_a,player_b,score_a (1 v 1); "
        "when_utc_seconds,side_a,side_b,score_a (a side: ids joined by +, e.g. 11+12); "
        "when_utc_seconds,sides,placements (free-for-all: sides separated by |, e.g. 1+2|3|4+5, "
        "and one place per side, e.g. 1|2|2; equal places draw; 2-8 players)",
    )
    parser.add_argument("--engine", choices=[*ENGINES, "all"], help="tgr by default; with --tune, all")
    parser.add_argument("--params", help='engine constants as a JSON object, e.g. {"sc": 5, "luck_p": 1}')
    parser.add_argument(
        "--edge",
        metavar="POINTS",
        help="rating points the side named first plays above its rating (a home team's edge); 0 by default",
    )
    parser.add_argument("--tune", action="store_true", help="choose parameters and edge on the training part first")
    parser.add_argument(
        "--packages",
        action="store_true",
        help="team and free-for-all files: add the trueskill and openskill packages, their beta and tau tuned",
    )
    parser.add_argument("--train-until", metavar="ISO-DATE", help="score from this instant (UTC) on")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


class UsageError(ValueError):
    """A bad option value; the message is the one line printed."""


def _params(text: str | None) -> Params:
    if text is None:
        return Params()
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"--params must be a JSON object: {error.msg} at character {error.pos}") from None
    if not isinstance(values, dict):
        raise UsageError(f"--params must be a JSON object, got {type(values).__name__}")
    try:
        return Params(**values)
    except TypeError:
        known = ", ".join(field for field in Params.__dataclass_fields__)
        raise UsageError(f"--params accepts only {known}; got {', '.join(sorted(values))}") from None
    except ValueError as error:
        raise UsageError(f"--params: {error}") from None


EDGE_LIMIT = 1000.0


def _edge(text: str | None) -> float:
    if text is None:
        return 0.0
    try:
        edge = float(text)
    except ValueError:
        raise UsageError(f"--edge must be a number of rating points, got {text!r}") from None
    if not -EDGE_LIMIT <= edge <= EDGE_LIMIT:  # also refuses nan and inf
        raise UsageError(f"--edge must be between -{EDGE_LIMIT:g} and {EDGE_LIMIT:g} rating points, got {text}")
    return edge + 0.0


def _test_start(matches: Sequence[Timed], train_until: str | None) -> int:
    if train_until is None:
        return split_index(matches)
    try:
        instant = datetime.fromisoformat(train_until)
    except ValueError:
        raise UsageError(f"--train-until must be an ISO date such as 2020-01-01, got {train_until!r}") from None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return index_at(matches, instant.timestamp())


def _date(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).date().isoformat()


VERSUS = ("elo_k32", "glicko2_package")


def _row(name: str, row: dict[str, Any], versus: Sequence[str] = ()) -> str:
    m = row["metrics"]
    text = f"{name:<22} {m['log_loss']:>8.4f} {m['brier']:>7.4f} {m['accuracy']:>8.4f} {m['ece']:>7.4f} {m['n']:>8}"
    for baseline in versus:
        difference = row["log_loss_minus"][baseline]
        mark = " *" if difference["significant"] else "  "
        text += f"   {difference['mean']:+.4f} ± {2 * difference['se']:.4f}{mark}"
    return text


def _table(report: dict[str, Any]) -> list[str]:
    split = report["split"]
    lines = [
        f"{split['matches']:,} matches: trained on {split['train']:,}, "
        f"scored on {split['test']:,} from {_date(split['test_from_utc_seconds'])}",
        f"{'predictor':<22} {'log-loss':>8} {'Brier':>7} {'accuracy':>8} {'ECE':>7} {'n':>8}"
        "   vs Elo K=32 (± 2 SE)      vs glicko2 package",
    ]
    rows = report.get("engines") or [report]
    lines += [_row(row["engine"], row, VERSUS) for row in rows]
    lines += [_row(f"{row['engine']} calibrated", row["calibrated"], VERSUS) for row in rows if "calibrated" in row]
    lines += [_row(f"{row['engine']} tracked", row["tracked"], VERSUS) for row in rows if "tracked" in row]
    lines += [_row(name, row) for name, row in report["baselines"].items()]
    lines.append("* the margin is larger than twice its paired standard error")
    lines += [
        f"calibration of {row['engine']} (fitted on the validation slice): "
        f"slope {row['calibration']['slope']:.3f}, intercept {row['calibration']['intercept']:+.3f}"
        for row in rows
        if "calibration" in row
    ]
    lines += [
        f"tracked {row['engine']}: refitted every {row['tracking']['every']} results on the latest "
        f"{row['tracking']['window']:,} (window chosen on the validation slice); last slope "
        f"{row['tracking']['last']['slope']:.3f}, intercept {row['tracking']['last']['intercept']:+.3f}"
        for row in rows
        if "tracking" in row
    ]
    if "bands" in report:
        lines.append(f"{report['engine']} by the favourite's rating:")
        lines += [_row(f"  {name}", {"metrics": m}) for name, m in report["bands"].items()]
        lines.append(
            "reliability: "
            + ", ".join(
                f"{b['low']:.1f}-{b['high']:.1f}: {b['predicted']:.3f}→{b['observed']:.3f} ({b['n']})"
                for b in report["reliability"]
            )
        )
    if "tuned" in rows[0] and "by_type" not in report:
        lines.append("best parameters (on the validation slice of the training part):")
        lines += [
            f"  {row['engine']:<8} {json.dumps(row['tuned'])}  edge {row['edge']:+g}"
            f"  validation log-loss {row['validation']['log_loss']:.4f}"
            for row in rows
        ]
        lines.append(f"recommended: {report['engine']} {json.dumps(rows[0]['tuned'])} --edge {report['edge']:g}")
        lines.append("edge: rating points the side named first (a home team) plays above its rating")
    return lines


GAMES_VERSUS = ("elo_k32", "trueskill_defaults", "trueskill_package", "openskill_package")
GAMES_LABELS = {
    "elo_k32": "Elo team mean",
    "trueskill_defaults": "TrueSkill defaults",
    "trueskill_package": "trueskill pkg",
    "openskill_package": "openskill pkg",
}


def _games_table(report: dict[str, Any]) -> list[str]:
    """A team or free-for-all report: each engine, per game type, the baselines and the packages."""
    split = report["split"]
    versus = [name for name in GAMES_VERSUS if name in report["log_loss_minus"]]
    lines = [
        f"{split['matches']:,} games: trained on {split['train']:,}, scored on {split['test']:,} "
        f"({split['test_pairs']:,} pairs of sides) from {_date(split['test_from_utc_seconds'])}",
        f"{'predictor':<22} {'log-loss':>8} {'Brier':>7} {'accuracy':>8} {'ECE':>7} {'n':>8}"
        + "".join(f"   vs {GAMES_LABELS[name]:<18}" for name in versus),
    ]
    rows = report.get("engines") or [report]
    lines += [_row(row["engine"], row, versus) for row in rows]
    lines += [_row(f"{row['engine']} calibrated", row["calibrated"], versus) for row in rows if "calibrated" in row]
    lines += [_row(name, row) for name, row in report["baselines"].items()]
    lines.append("* the margin is larger than twice its paired standard error (± shows 2 SE)")
    lines.append(f"{report['engine']} by game type:")
    lines += [_row(f"  {TYPE_LABELS[kind]}", {"metrics": m}) for kind, m in report["by_type"].items()]
    for name, row in report["baselines"].items():
        if len(row.get("by_type", {})) > 1:
            lines.append(f"{name} by game type:")
            lines += [_row(f"  {TYPE_LABELS[kind]}", {"metrics": m}) for kind, m in row["by_type"].items()]
    lines += [
        f"calibration of {row['engine']} (fitted on the validation slice): slope {row['calibration']['slope']:.3f}"
        for row in rows
        if "calibration" in row
    ]
    if "tuned" in rows[0]:
        lines.append("best parameters (on the validation slice of the training part):")
        lines += [
            f"  {row['engine']:<9} {json.dumps(row['tuned'])}  validation log-loss {row['validation']['log_loss']:.4f}"
            for row in rows
        ]
        lines += [
            f"  {name:<9} {json.dumps(row['params'])}  validation log-loss {row['validation']['log_loss']:.4f}"
            for name, row in report["baselines"].items()
            if "validation" in row
        ]
        lines.append(f"recommended: --engine {report['engine']} --params '{json.dumps(rows[0]['tuned'])}'")
    return lines


def _games(args: argparse.Namespace, games: list[Any], params: Params) -> dict[str, Any]:
    if args.edge is not None:
        raise UsageError("--edge is for 1 v 1 files: a team game's sides have no order")
    if args.packages:
        require()
    test_start = _test_start(games, args.train_until)
    if args.tune:
        engines = None if args.engine in (None, "all") else [args.engine]
        return games_tune_report(games, test_start, engines=engines, progress=stderr_progress, packages=args.packages)
    if args.engine == "all":
        if args.json:
            raise UsageError("--json prints one engine: name it with --engine, or add --tune")
        reports = [games_backtest_report(games, name, params, test_start) for name in ENGINES]
        report = {**reports[0], "engines": reports}
        del report["bands"]
        return report
    return games_backtest_report(
        games, args.engine or "tgr", params, test_start, packages=args.packages, progress=stderr_progress
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        params = _params(args.params)
        edge = _edge(args.edge)
        if args.tune and args.edge is not None:
            raise UsageError("--tune chooses the edge: leave --edge out, or leave --tune out to set it")
        games = read_games(args.csv)
        matches = as_matches(games)
        if matches is None:
            report = _games(args, games, params)
            print(json.dumps(report) if args.json else "\n".join(_games_table(report)))
            return 0
        if args.packages:
            raise UsageError("--packages compares team games; a 1 v 1 file has the glicko2 package among its baselines")
        test_start = _test_start(matches, args.train_until)
        if args.tune and args.engine not in (None, "all", *TUNED):
            raise UsageError(f"--tune on a 1 v 1 file tunes {', '.join(TUNED)}; got --engine {args.engine}")
        if args.tune:
            engines = list(TUNED) if args.engine in (None, "all") else [args.engine]
            report = tune_report(matches, test_start, engines=engines, progress=stderr_progress)
        elif args.engine == "all":
            if args.json:
                raise UsageError("--json prints one engine: name it with --engine, or add --tune")
            reports = [backtest_report(matches, name, params, test_start, edge=edge) for name in ENGINES]
            report = {**reports[0], "engines": reports}
            del report["bands"]
        else:
            report = backtest_report(matches, args.engine or "tgr", params, test_start, edge=edge)
    except (DataError, UsageError, MissingPackage) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report))
    else:
        print("\n".join(_table(report)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
