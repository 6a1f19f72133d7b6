"""Tuning 48 parameter sets over 1,000,000 matches: the backtest lab's speed (issue 17, item 6).

The matches are synthetic, from a seeded model: 20,000 players whose true strengths drift
(a random walk of 8 rating points a √week), with activity that varies from player to
player (log-normal), over ten years; 10% of results are draws. Nothing is read from disk
and nothing is written. The grid is 48 sets of the engines with a vectorised replay
(``ratings/backtest/vector.py``): TGR 24 (SC × P × initial RD), Glicko-1 12, Elo 12,
tuned exactly as ``python -m ratings.backtest --tune`` does (``tune.tune``, two processes),
without the grid's extension, so the count stays 48.

The machine reference is a fixed pure-Python loop on one core, timed in the same run; the
figure is printed as a multiple of it too, so runs on other or busier machines compare.
Run: ``.venv/bin/python bench/backtest.py [--matches N] [--players N]``.

Target (issue 17): at most 60 s on this 2-core machine.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ratings.backtest.data import Match, split_index
from ratings.backtest.tune import tune
from ratings.backtest.vector import rounds

TARGET_SECONDS = 60.0
GRID: dict[str, dict[str, Sequence[float]]] = {
    "tgr": {"sc": (1.25, 2.5, 5.0, 20.0), "luck_p": (0.9, 1.0), "initial_rd": (150.0, 250.0, 350.0)},
    "glicko1": {"c": (1.25, 2.5, 5.0, 20.0), "initial_rd": (150.0, 250.0, 350.0)},
    "elo": {"k": (16.0, 24.0, 32.0, 48.0), "sc": (2.5, 5.0, 20.0)},
}
DAY = 86_400.0


def synthetic(matches: int, players: int, *, seed: int = 2026, days: int = 3650) -> list[Match]:
    """``matches`` results among ``players`` whose strengths drift; in time order, draws included."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(1500.0, 200.0, players)
    activity = rng.lognormal(0.0, 1.0, players)
    activity /= activity.sum()
    per_day = np.diff(np.linspace(0, matches, days + 1).astype(np.int64))
    result: list[Match] = []
    for day, count in enumerate(per_day):
        strength += rng.normal(0.0, 8.0 / math.sqrt(7.0), players)
        a = rng.choice(players, count, p=activity)
        b = (a + rng.integers(1, players, count)) % players  # never a itself
        p_a = 1.0 / (1.0 + 10.0 ** ((strength[b] - strength[a]) / 400.0))
        draw = rng.random(count) < 0.1
        score = np.where(draw, 0.5, (rng.random(count) < p_a).astype(np.float64))
        at = day * DAY + np.sort(rng.uniform(0.0, DAY, count))
        rows = zip(at.tolist(), a.tolist(), b.tolist(), score.tolist(), strict=True)
        result += [Match(t, f"p{x}", f"p{y}", s) for t, x, y, s in rows]
    return result


def reference_loop(iterations: int = 3_000_000) -> float:
    """Seconds for a fixed pure-Python loop of float arithmetic on one core (best of 3)."""
    best = math.inf
    for _ in range(3):
        started = time.perf_counter()
        total = 0.0
        for index in range(iterations):
            total += (index % 7) * 0.5
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=20_000)
    args = parser.parse_args()
    started = time.perf_counter()
    matches = synthetic(args.matches, args.players)
    built = time.perf_counter() - started
    reference = reference_loop()
    sets = sum(math.prod(len(values) for values in axes.values()) for axes in GRID.values())
    test_start = split_index(matches)
    started = time.perf_counter()
    tuned = tune(matches, test_start, engines=tuple(GRID), grids=GRID, extend=0)
    elapsed = time.perf_counter() - started
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"{len(matches):,} synthetic matches, {args.players:,} players (built in {built:.1f} s, not timed)")
    print(f"{len(rounds(matches).bounds) - 1:,} rounds of independent matches (ratings/backtest/vector.py)")
    print(f"reference: a fixed pure-Python loop of 3,000,000 steps {reference:.3f} s")
    for result in tuned:
        print(f"  best {result.engine:<8} {result.params}  validation log-loss {result.validation.log_loss:.4f}")
    verdict = "ok" if elapsed <= TARGET_SECONDS else "MISSED"
    print(
        f"tuning {sets} parameter sets over {len(matches):,} matches: {elapsed:.1f} s "
        f"({elapsed / reference:.0f}× the reference), target ≤ {TARGET_SECONDS:.0f} s {verdict}"
    )


if __name__ == "__main__":
    main()
