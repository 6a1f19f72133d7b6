"""Tournaments: a Swiss round of 1,000 players, and standings with every tie-break (issue 32).

The field is ``--players`` entrants with ratings from a seeded generator (uniform 1000–2200).
Rounds are paired by ``tournaments.formats.swiss_pairings`` itself and their results drawn
from the ratings (the Elo expectation, 10% draws), so the score groups and the rematches
to avoid are those of a real Swiss. Timed, best and median of ``--runs``:

- **pairing**: ``swiss_pairings`` of round ``--rounds`` + 1, after ``--rounds`` played rounds;
- **standings**: ``standings`` with all six tie-breaks after ``--standings-rounds`` rounds;
- **bracket page**: the page of a double-elimination tournament of ``--bracket-players``
  entries (256) after ``--bracket-waves`` waves of its games were decided, its bracket drawn
  in SVG with its standings and rounds: the server time of a GET through Django's test client,
  median of ``--runs`` after three not counted (the target's figure: the page as every visit
  between two results gets it, its standings and bracket kept in the cache under the results'
  version), and the same with the cache emptied before each GET (the first visit after a
  result). This one needs PostgreSQL: ``DATABASE_URL``
  if set, else a throwaway one (bench/_pg.py); its reference is ``SELECT 1`` round trips
  through psycopg in the same run (bench/_reference.py). ``--bracket-players 0`` skips it.

Pure Python, no database. The machine reference is the fixed pure-Python loop of
bench/backtest.py, timed in the same run; each figure is also printed as a multiple of it,
so runs on other or busier machines compare.
Run: ``.venv/bin/python bench/tournaments.py [--players 1000] [--rounds 5] [--standings-rounds 9]``.

Targets (issue 32): a Swiss round of 1,000 players after 5 rounds ≤ 1 s; standings with all
tie-breaks for 1,000 players after 9 rounds ≤ 200 ms; a 256-player double-elimination bracket
page ≤ 50 ms of server time.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tournaments.formats import TIEBREAKS, Entrant, Game, PointsRule, standings, swiss_pairings

TARGET_PAIRING_MS = 1000.0
TARGET_STANDINGS_MS = 200.0
TARGET_BRACKET_PAGE_MS = 50.0
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
    parser.add_argument("--bracket-players", type=int, default=256, help="0 skips the bracket page")
    parser.add_argument("--bracket-waves", type=int, default=4, help="waves of games decided before it is timed")
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

    if args.bracket_players:
        bracket_page(args.bracket_players, args.bracket_waves, args.runs)


def bracket_page(players: int, waves: int, runs: int) -> None:
    """Build a double-elimination tournament on PostgreSQL, decide ``waves`` waves, time its page."""
    import os

    import _pg
    import _reference
    from _ladder import make_ladder

    os.environ.setdefault("ALLOWED_HOSTS", "localhost,testserver")
    with _pg.database() as url:
        try:
            _pg.setup_django(url)
            from django.conf import settings
            from django.test import Client, override_settings
            from django.utils import timezone

            from accounts.models import User
            from tournaments import services
            from tournaments.models import Board, Format

            started = time.perf_counter()
            ladder, users, _ = make_ladder(players, 2026, name="Bracket bench", prefix="bb", ready_window_seconds=0)
            organiser = User.objects.create(username=f"bb_org_{ladder.pk}", password="!", is_superuser=True)
            now = timezone.now()
            tournament = services.tournament_create(
                ladder=ladder,
                by=organiser,
                name="Bench cup",
                slug="bench-cup",
                format=Format.DOUBLE_ELIMINATION,
                check_in_minutes=0,
                registration_closes_at=now + timedelta(hours=1),
                starts_at=now + timedelta(hours=1),
            )
            for user in users:
                services.entry_register(tournament=tournament, captain=user)
            tournament = services.tournament_start(tournament=tournament, by=organiser)
            for _ in range(waves):
                for board in Board.objects.filter(tournament=tournament, result__isnull=True).exclude(b=None):
                    services.board_decide(board=board, by=organiser, result=1.0, reason="bench")
                tournament = services.tournament_advance(tournament=tournament)
            boards = Board.objects.filter(tournament=tournament).count()
            _pg.log(f"build: {players} entries, {boards} games in {time.perf_counter() - started:.1f} s")
            client = Client()
            plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
            times, cold = [], []
            from django.core.cache import cache

            with override_settings(STORAGES={**settings.STORAGES, "staticfiles": plain}):
                for number in range(2 * runs + 3):
                    if number >= runs + 3:
                        cache.clear()
                    began = time.perf_counter()
                    response = client.get(tournament.get_absolute_url(), secure=True)
                    spent = time.perf_counter() - began
                    if response.status_code != 200 or b"<svg" not in response.content:
                        raise SystemExit(f"error: the bracket page answered {response.status_code} without a bracket")
                    if number >= runs + 3:
                        cold.append(spent * 1000)
                    elif number >= 3:
                        times.append(spent * 1000)
            _pg.log("reference: SELECT 1 round trips through psycopg")
            reference = _reference.select_one(url)
        finally:
            _pg.close_django()
    median = statistics.median(times)
    verdict = "met" if median <= TARGET_BRACKET_PAGE_MS else "MISSED"
    label = f"double-elimination bracket page, {players} entries, {boards} games"
    print(f"{reference.line()}")
    print(
        f"{label:<62} best {min(times):8.1f} ms  median {median:8.1f} ms"
        f"  ({reference.ratio(1000 / median)} ref)  target ≤ {TARGET_BRACKET_PAGE_MS:g} ms {verdict}"
    )
    print(
        f"{'  the first visit after a result (cache emptied)':<62} best {min(cold):8.1f} ms"
        f"  median {statistics.median(cold):8.1f} ms  (no target)"
    )


if __name__ == "__main__":
    main()
