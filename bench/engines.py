"""Single-game rating updates per second: our engines against peer packages from PyPI.

Every implementation rates the same random 1 v 1 games (both players updated: for the
``glicko2`` package that is two ``update_player`` calls, as it updates one player at a
time). Figures are the best of several timed rounds; ratios are against the ``glicko2``
package's 1 v 1 game. Run: ``.venv/bin/python bench/engines.py [--games N]``.

Targets (issue 3): TGR and Glicko-1 ≥ 4×, our Glicko-2 ≥ 2×, a 2 v 3 team game ≥ 1×.
Targets (issue 30): a 2 v 2 update with the Bayesian share and a TrueSkill 2 v 2 update in at
most 30 µs, a TrueSkill 8-player free-for-all in at most 300 µs; the `trueskill` package's
2 v 2 and free-for-all beside them.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ratings.engines import Params, RatingState, get_engine

TARGETS = {"tgr 1v1": 4.0, "glicko1 1v1": 4.0, "glicko2 1v1": 2.0, "tgr 2v3 team": 1.0}
MAX_MICROSECONDS = {
    "tgr 2v2 team, Bayesian share": 30.0,
    "trueskill 2v2 team": 30.0,
    "trueskill 8-player free-for-all": 300.0,
}


def make_games(
    count: int, seed: int = 2026
) -> list[tuple[tuple[float, float, float], tuple[float, float, float], int]]:
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        a = (rng.uniform(1000, 2200), rng.uniform(40, 350), rng.uniform(0.04, 0.08))
        b = (rng.uniform(1000, 2200), rng.uniform(40, 350), rng.uniform(0.04, 0.08))
        games.append((a, b, rng.choice((1, 2))))
    return games


def best_rate(run: Callable[[], int], rounds: int) -> float:
    """Games per second, best of ``rounds``."""
    best = 0.0
    for _ in range(rounds):
        started = time.perf_counter()
        games = run()
        elapsed = time.perf_counter() - started
        best = max(best, games / elapsed)
    return best


def ours(name: str, games: list, *, params: Params | None = None) -> Callable[[], int]:
    engine = get_engine(name, params)
    at = 10 * 86_400.0
    prepared = [
        (
            [RatingState(a[0], a[1], a[2], 9 * 86_400.0)],
            [RatingState(b[0], b[1], b[2], 8.5 * 86_400.0)],
            [1, 2] if w == 1 else [2, 1],
        )
        for a, b, w in games
    ]
    rate = engine.rate

    def run() -> int:
        for side_a, side_b, placements in prepared:
            rate((side_a, side_b), placements, at)
        return len(prepared)

    return run


def ours_team(games: list, name: str = "tgr", params: Params | None = None, opponents: int = 3) -> Callable[[], int]:
    engine = get_engine(name, params)
    rng = random.Random(7)
    prepared = []
    for a, b, w in games:
        team_a = [RatingState(a[0], a[1]), RatingState(b[0], b[1])]
        team_b = [RatingState(rng.uniform(1000, 2200), rng.uniform(40, 350)) for _ in range(opponents)]
        prepared.append(((team_a, team_b), [1, 2] if w == 1 else [2, 1]))
    rate = engine.rate

    def run() -> int:
        for sides, placements in prepared:
            rate(sides, placements, 0.0)
        return len(prepared)

    return run


def ours_free_for_all(games: list, name: str = "tgr") -> Callable[[], int]:
    engine = get_engine(name)
    rng = random.Random(11)
    prepared = []
    for _ in range(max(1, len(games) // 4)):
        sides = [[RatingState(rng.uniform(1000, 2200), rng.uniform(40, 350))] for _ in range(8)]
        prepared.append((sides, rng.sample(range(1, 9), 8)))
    rate = engine.rate

    def run() -> int:
        for sides, placements in prepared:
            rate(sides, placements, 0.0)
        return len(prepared)

    return run


def peer_glicko2(games: list) -> Callable[[], int] | None:
    try:
        import glicko2
    except ImportError:
        return None

    def run() -> int:
        for a, b, w in games:
            pa = glicko2.Player(a[0], a[1], a[2])
            pb = glicko2.Player(b[0], b[1], b[2])
            score = 1 if w == 1 else 0
            pa.update_player([b[0]], [b[1]], [score])
            pb.update_player([a[0]], [a[1]], [1 - score])
        return len(games)

    return run


def peer_trueskill(games: list) -> Callable[[], int] | None:
    try:
        import trueskill
    except ImportError:
        return None
    env = trueskill.TrueSkill(draw_probability=0.0)
    prepared = [
        (env.create_rating(a[0] / 60, a[1] / 60), env.create_rating(b[0] / 60, b[1] / 60), w) for a, b, w in games
    ]

    def run() -> int:
        for ra, rb, w in prepared:
            if w == 1:
                env.rate_1vs1(ra, rb)
            else:
                env.rate_1vs1(rb, ra)
        return len(prepared)

    return run


def peer_trueskill_team(games: list) -> Callable[[], int] | None:
    """The package's 2 v 2: the same teams as ``ours_team(..., opponents=2)``, in TrueSkill units."""
    try:
        import trueskill
    except ImportError:
        return None
    env = trueskill.TrueSkill()
    rng = random.Random(7)
    prepared = []
    for a, b, w in games:
        team_a = (env.create_rating((a[0] - 450) / 42, a[1] / 42), env.create_rating((b[0] - 450) / 42, b[1] / 42))
        team_b = tuple(
            env.create_rating((rng.uniform(1000, 2200) - 450) / 42, rng.uniform(40, 350) / 42) for _ in range(2)
        )
        prepared.append(((team_a, team_b), [0, 1] if w == 1 else [1, 0]))

    def run() -> int:
        for teams, ranks in prepared:
            env.rate(teams, ranks=ranks)
        return len(prepared)

    return run


def peer_trueskill_free_for_all(games: list) -> Callable[[], int] | None:
    try:
        import trueskill
    except ImportError:
        return None
    env = trueskill.TrueSkill()
    rng = random.Random(11)
    prepared = []
    for _ in range(max(1, len(games) // 4)):
        sides = [
            (env.create_rating((rng.uniform(1000, 2200) - 450) / 42, rng.uniform(40, 350) / 42),) for _ in range(8)
        ]
        prepared.append((sides, [place - 1 for place in rng.sample(range(1, 9), 8)]))

    def run() -> int:
        for sides, ranks in prepared:
            env.rate(sides, ranks=ranks)
        return len(prepared)

    return run


def peer_openskill(games: list) -> Callable[[], int] | None:
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        return None
    model = PlackettLuce()
    prepared = [
        (model.rating(mu=a[0] / 60, sigma=a[1] / 60), model.rating(mu=b[0] / 60, sigma=b[1] / 60), w)
        for a, b, w in games
    ]

    def run() -> int:
        for ra, rb, w in prepared:
            model.rate([[ra], [rb]], ranks=[1, 2] if w == 1 else [2, 1])
        return len(prepared)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    games = make_games(args.games)
    cases: list[tuple[str, Callable[[], int] | None]] = [
        ("glicko2 package 1v1 (baseline)", peer_glicko2(games)),
        ("tgr 1v1", ours("tgr", games)),
        ("glicko1 1v1", ours("glicko1", games)),
        ("glicko2 1v1", ours("glicko2", games)),
        ("elo 1v1", ours("elo", games)),
        ("tgr 2v3 team", ours_team(games)),
        ("tgr 8-player free-for-all", ours_free_for_all(games)),
        ("tgr 2v2 team, own RD", ours_team(games, opponents=2)),
        ("tgr 2v2 team, Bayesian share", ours_team(games, params=Params(team_delta="bayes"), opponents=2)),
        ("trueskill 1v1", ours("trueskill", games)),
        ("trueskill 2v2 team", ours_team(games, "trueskill", opponents=2)),
        ("trueskill 8-player free-for-all", ours_free_for_all(games, "trueskill")),
        ("trueskill package 1v1", peer_trueskill(games)),
        ("trueskill package 2v2 team", peer_trueskill_team(games)),
        ("trueskill package 8-player free-for-all", peer_trueskill_free_for_all(games)),
        ("openskill package 1v1 (Plackett-Luce)", peer_openskill(games)),
    ]
    print(f"python {sys.version.split()[0]}, {args.games:,} games, best of {args.rounds} rounds")
    rates = {}
    for label, run in cases:
        if run is None:
            print(f"{label:<40} not installed")
            continue
        rates[label] = best_rate(run, args.rounds)
    baseline = rates.get("glicko2 package 1v1 (baseline)")
    print(f"{'implementation':<40} {'games/s':>12} {'µs/game':>9} {'× glicko2 pkg':>14} {'target':>12}")
    for label, rate in rates.items():
        ratio = rate / baseline if baseline else float("nan")
        target = TARGETS.get(label)
        most = MAX_MICROSECONDS.get(label)
        verdict = ""
        if target is not None:
            verdict = f"≥{target:g}× {'ok' if ratio >= target else 'MISSED'}"
        elif most is not None:
            verdict = f"≤{most:g} µs {'ok' if 1e6 / rate <= most else 'MISSED'}"
        print(f"{label:<40} {rate:>12,.0f} {1e6 / rate:>9.2f} {ratio:>13.2f}× {verdict:>12}")


if __name__ == "__main__":
    main()
