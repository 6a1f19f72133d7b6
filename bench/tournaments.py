"""Tournaments: a Swiss round of 1,000 players, and standings with every tie-break (issue 32).

The field is ``--players`` entrants with ratings from a seeded generator (uniform 1000–2200).
Rounds are paired by ``tournaments.formats.swiss_pairings`` itself and their results drawn
from the ratings (the Elo expectation, 10% draws), so the score groups and the rematches
to avoid are those of a real Swiss. Timed, best and median of ``--runs``:

- **pairing**: ``swiss_pairings`` of round ``--rounds`` + 1, after ``--rounds`` played rounds;
- **standings**: ``standings`` with all six tie-breaks after ``--standings-rounds`` rounds.

Pure Python, no database. The machine reference is the fixed pure-Python loop of
bench/backtest.py, timed in the same run; each figure is also printed as a multiple of it,
so runs on other or busier machines compare.
Run: ``.venv/bin/python bench/tournaments.py [--players 1000] [--rounds 5] [--standings-rounds 9]``.

Targets (issue 32): a Swiss round of 1,000 players after 5 rounds ≤ 1 s; standings with all
tie-breaks for 1,000 players after 9 rounds ≤ 200 ms.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tournaments.formats import TIEBREAKS, Entrant, Game, PointsRule, standings, swiss_pairings

TARGET_PAIRING_MS = 1000.0
TARGET_STANDINGS_MS = 200.0
RULE = PointsRule()


def reference_loop(iterations: int = 3_000_000) -> float:
    """Seconds for a fixed pure-Python loop of float arithmetic on one core (best of 3).

    The same loop as bench/backtest.py's, so the two benchmarks' ratios compare.
    """
    best = math.inf
    for _ in range(3):
        started = time.perf_counter()
        total = 0.0
        for index in range(iterations):
            total += (index % 7) * 0.5
        best = min(best, time.perf_counter() - started)
    return best


def swiss(players: int, rounds: int, seed: int = 2026) -> tuple[list[Entrant], list[Game]]:
    """A field of ``players`` and ``rounds`` Swiss rounds played, results drawn from the ratings."""
    rng = random.Random(seed)
    entrants = [Entrant(number, rng.uniform(1000.0, 2200.0)) for number in range(1, players + 1)]
    rating = {entrant.id: entrant.rating for entrant in entrants}
    games: list[Game] = []
    for number in range(1, rounds + 1):
        pairing = swiss_pairings(entrants, games, RULE)
        for a, b in pairing.pairs:
            expected = 1.0 / (1.0 + 10.0 ** ((rating[b] - rating[a]) / 400.0))
            draw = rng.random() < 0.1
            games.append(Game(number, a, b, 0.5 if draw else 1.0 if rng.random() < expected else 0.0))
        if pairing.bye is not None:
            games.append(Game(number, pairing.bye, None, 1.0, "bye"))
    return entrants, games


def timed(run: Callable[[], object], runs: int) -> tuple[float, float]:
    """Best and median milliseconds of ``runs`` calls."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000.0)
    return min(times), statistics.median(times)


def line(label: str, best: float, median: float, reference: float, target: float) -> str:
    verdict = "ok" if median <= target else "MISSED"
    ratio = best / 1000.0 / reference
    return (
        f"{label:<58} best {best:8.1f} ms, median {median:8.1f} ms ({ratio:.2f}× ref)  target ≤ {target:g} ms {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5, help="rounds played before the timed pairing")
    parser.add_argument("--standings-rounds", type=int, default=9, help="rounds played before the timed standings")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    reference = reference_loop()
    print(f"python {sys.version.split()[0]}, {args.players:,} players, {args.runs} runs each")
    print(f"reference: a fixed pure-Python loop of 3,000,000 steps {reference:.3f} s")

    entrants, games = swiss(args.players, max(args.rounds, args.standings_rounds))
    before = [game for game in games if game.round <= args.rounds]
    best, median = timed(lambda: swiss_pairings(entrants, before, RULE), args.runs)
    label = f"Swiss round of {args.players:,} players after {args.rounds} rounds"
    print(line(label, best, median, reference, TARGET_PAIRING_MS))

    played = [game for game in games if game.round <= args.standings_rounds]
    ids = [entrant.id for entrant in entrants]
    ratings = {entrant.id: entrant.rating for entrant in entrants}
    best, median = timed(lambda: standings(ids, played, RULE, TIEBREAKS, ratings), args.runs)
    label = f"standings, all {len(TIEBREAKS)} tie-breaks, {args.players:,} after {args.standings_rounds} rounds"
    print(line(label, best, median, reference, TARGET_STANDINGS_MS))

    # The third figure (issue 32): a 256-player double-elimination bracket page, ≤ 50 ms of server time.


if __name__ == "__main__":
    main()
