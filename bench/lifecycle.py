"""Matches per second through the queue's match lifecycle, on PostgreSQL (issue 15).

A ladder of ``--players`` members (``_ladder.make_ladder``; rematch cooldown 0, the widest
win-chance window, a ready check of an hour) plays ``--matches`` matches, each as the
queue makes them: two players search (``queue_join``), the second is paired with the
first at once; then the path measured, what happens after pairing: both press Ready
(``lifecycle.ready``), the first reports the placements (``match_report_result``), the
second confirms (``match_confirm``, which rates it); between Ready and the report the game
takes 20 minutes (its start is moved back, untimed), so the fair-play watch reads a game
played, as on a real ladder, and holds nothing. Players go in disjoint pairs taken in
turn, so no one is in two open matches. Only the four steps of the path are timed; the
pairing is timed apart and shown for comparison.

Statements are counted per step on ``--sample`` further matches (``_phases.QueryLog``:
BEGIN and COMMIT are not counted), and each step's project functions timed
(``_phases.Phases``, inclusive). ``--show-sql`` lists every statement of one match.

``--workers N`` processes (default 2, one a core) then run the same path at once, each on
its own ladder with its own players and its own connection, forked after the parent closed
its connections; the aggregate is the sum of the workers' path rates (each worker's
matches over the time it spent in the path, while the others ran too).

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/lifecycle.py [--players 200] [--matches 1000] [--workers 2]``.

Target: ≥ 300 matches per second through ready → ready → report → confirm on the machine
where pgbench does 5,100 tps, so ≥ 0.059× the reference printed here. On PostgreSQL a press
of Ready is one statement, the report and the confirmation two each
(``ladder.matches.answers``); ``--show-sql`` prints them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pg
import _reference
import report
from _ladder import make_ladder
from _phases import Phases, QueryLog, home_of, project_functions

TARGET_PER_SECOND = 300.0
# The target as a share of the reference: 300/s on the machine where pgbench did 5,100/s.
TARGET_RATIO = 300.0 / 5_100.0
STEPS = ("ready (first)", "ready (second)", "match_report_result", "match_confirm")
QUEUE = {
    "rematch_cooldown_minutes": 0,  # the same two players are paired again and again
    "queue_min_win_probability": 0.001,  # any two ratings fit (the database refuses 0)
    "queue_widest_min_win_probability": 0.001,
    "ready_window_seconds": 3_600,  # the ready check never runs out during the run
}


class Runner:
    """Pairs through the queue, then the lifecycle path; ``seconds`` sums each step's time."""

    def __init__(self, ladder, users, seed: int) -> None:
        self.ladder = ladder
        self.pairs = [(users[i], users[i + 1]) for i in range(0, len(users) - 1, 2)]
        self.rng = random.Random(seed)
        self.turn = 0
        self.seconds = dict.fromkeys(("pairing", *STEPS), 0.0)
        self.logs: dict[str, QueryLog] | None = None  # per step, while counting

    def reset(self) -> None:
        self.seconds = dict.fromkeys(self.seconds, 0.0)

    def path_seconds(self) -> float:
        return sum(self.seconds[step] for step in STEPS)

    def _step(self, name: str, call: Callable[..., Any], **kwargs: Any) -> Any:
        from django.db import connection

        started = time.perf_counter()
        if self.logs is None:
            result = call(**kwargs)
        else:
            with connection.execute_wrapper(self.logs[name]):
                result = call(**kwargs)
        self.seconds[name] += time.perf_counter() - started
        return result

    def pair(self):
        from matchmaking.services import queue_join

        first, second = self.pairs[self.turn % len(self.pairs)]
        self.turn += 1
        queue_join(ladder=self.ladder, player=first)
        entry = queue_join(ladder=self.ladder, player=second)
        if entry.match is None:
            raise SystemExit(f"error: {second.username} was not paired with {first.username} at once")
        return entry.match, first, second

    def __call__(self, count: int) -> int:
        from ladder.matches.reporting import match_confirm, match_report_result
        from matchmaking.lifecycle import ready

        for _ in range(count):
            match, first, second = self._step("pairing", self.pair)
            placements = [1, 2] if self.rng.random() < 0.5 else [2, 1]
            self._step("ready (first)", ready, match=match, user=first)
            self._step("ready (second)", ready, match=match, user=second)
            played(match)
            self._step("match_report_result", match_report_result, match=match, reporter=first, placements=placements)
            self._step("match_confirm", match_confirm, match=match, user=second)
        return count


def played(match: Any) -> None:
    """The game takes 20 minutes (not timed): its start moves back that far, so the fair-play watch
    (docs/rules.md §15), which reads a game's length from its start to its report, sees a game
    played and holds nothing, as for the games of a real ladder."""
    from datetime import timedelta

    from django.db.models import F

    from ladder.models import Match

    Match.objects.filter(pk=match.pk).update(play_deadline=F("play_deadline") - timedelta(minutes=20))


def counted(run: Runner, count: int, *, show_sql: bool) -> dict[str, QueryLog]:
    """Each step's statements over ``count`` matches (after one match alone, recorded if ``show_sql``)."""
    run.logs = {step: QueryLog() for step in ("pairing", *STEPS)}
    for log in run.logs.values():
        log.record = show_sql
    run(1)
    for log in run.logs.values():
        log.record = False
        log.reset()
    run.reset()
    run(count)
    logs, run.logs = run.logs, None
    return logs


def service_targets() -> list[tuple[object, str]]:
    """The project functions the path calls by a global name, and the main ORM calls."""
    from django.db import connections
    from django.db.models import Model, QuerySet

    import ladder.matches.reporting as matches
    import matchmaking.lifecycle as lifecycle
    import matchmaking.services as queue
    from ratings.services import rating_apply_match

    prefixes = ("ladder.", "ratings.", "matchmaking.", "notifications.")
    targets = project_functions(matches, lifecycle, queue, home_of(rating_apply_match), prefixes=prefixes)
    targets += [(QuerySet, "create"), (QuerySet, "bulk_create"), (QuerySet, "bulk_update"), (Model, "save")]
    targets.append((type(connections["default"]), "commit"))
    return targets


def print_phases(run: Runner, count: int) -> None:
    with Phases(service_targets()) as phases:
        run(count)
    print(f"\nready → report → confirm (and the pairing): inclusive time per match by function, {count} matches")
    print(f"  {'function':<46} {'calls/match':>11} {'ms/match':>9}")
    for label, calls, seconds in phases.rows():
        print(f"  {label:<46} {calls / count:>11.2f} {1000 * seconds / count:>9.3f}")


def worker(url: str, ladder_pk: int, user_pks: list[int], args: argparse.Namespace, start, results) -> None:
    """One process: its own connection, its own ladder and players; puts (matches, path seconds, wall seconds)."""
    from django.db import connections

    from accounts.models import User
    from ladder.models import Ladder

    ladder = Ladder.objects.get(pk=ladder_pk)
    users = sorted(User.objects.filter(pk__in=user_pks), key=lambda user: user.pk)
    run = Runner(ladder, users, args.seed + ladder_pk)
    run(args.warmup)
    run.reset()
    start.wait()
    started = time.perf_counter()
    run(args.matches)
    results.put((args.matches, run.path_seconds(), time.perf_counter() - started))
    connections.close_all()


def in_parallel(url: str, args: argparse.Namespace) -> tuple[float, float]:
    """(aggregate path matches/s, aggregate matches/s with the pairing) of ``args.workers`` processes."""
    from django.db import connections

    ladders = [
        make_ladder(args.players, args.seed + n, name="Lifecycle bench", prefix="lb", **QUEUE)
        for n in range(args.workers)
    ]
    connections.close_all()  # a forked child must not share the parent's connection
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(args.workers), context.Queue()
    processes = [
        context.Process(target=worker, args=(url, ladder.pk, [user.pk for user in users], args, start, results))
        for ladder, users, _ in ladders
    ]
    for process in processes:
        process.start()
    done = [results.get() for _ in processes]
    for process in processes:
        process.join()
        if process.exitcode != 0:
            raise SystemExit(f"error: a worker exited with status {process.exitcode}")
    path_rate = sum(matches / seconds for matches, seconds, _ in done)
    overall = sum(matches for matches, _, _ in done) / max(wall for _, _, wall in done)
    return path_rate, overall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--matches", type=int, default=1_000, help="matches timed (by each worker too)")
    parser.add_argument("--sample", type=int, default=200, help="matches with statements counted and functions timed")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2, help="processes run at once for the aggregate (0: none)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--show-sql", action="store_true", help="print every statement of one match, by step")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="cProfile N more matches (with the pairing)"
    )
    args = parser.parse_args()

    with _pg.database() as url:
        try:
            _pg.setup_django(url)
            bench(args, url)
        finally:
            _pg.close_django()


def bench(args: argparse.Namespace, url: str) -> None:
    started = time.perf_counter()
    ladder, users, _ = make_ladder(args.players, args.seed, name="Lifecycle bench", prefix="lb", **QUEUE)
    _pg.log(f"ladder {ladder.slug}: {args.players} members in {time.perf_counter() - started:.1f} s")
    run = Runner(ladder, users, args.seed)
    run(args.warmup)
    run.reset()
    run(args.matches)
    seconds = dict(run.seconds)
    logs = counted(run, args.sample, show_sql=args.show_sql)
    sample_seconds = dict(run.seconds)
    parallel = None
    if args.workers:
        _pg.log(f"{args.workers} workers, {args.matches} matches each")
        parallel = in_parallel(url, args)

    _pg.log("reference: pgbench simple-update on the same PostgreSQL")
    reference = _reference.pgbench_simple_update(url)
    print(f"{_pg.versions()}, {args.players} players, 1 v 1, engine {ladder.engine}")
    print(reference.line())
    print_table(args, seconds, logs, reference, parallel)
    ratio = args.matches / sum(seconds[step] for step in STEPS) / reference.per_second
    met = "met" if ratio >= TARGET_RATIO else "missed"
    print(f"one process: {ratio:.3f}× the reference; the target, ≥ {TARGET_RATIO:.3f}× (300/s at 5,100/s), {met}")
    print_statements(logs, args.sample, sample_seconds)
    print_phases(run, args.sample)
    if args.show_sql:
        print("\nstatements of one match, by step (BEGIN and COMMIT not shown):")
        for step, log in logs.items():
            print(f"  -- {step}: {len(log.statements)}")
            for sql in log.statements:
                print(f"  {sql}")
    if args.profile:
        report.profile(run, args.profile, top=40, what="matches: pairing, ready × 2, report, confirm")


def print_table(args, seconds: dict[str, float], logs: dict[str, QueryLog], reference, parallel) -> None:
    count, sample = args.matches, args.sample
    path = sum(seconds[step] for step in STEPS)
    path_queries = sum(logs[step].count for step in STEPS) / sample
    print(f"{'path':<46} {'matches':>8} {'matches/s':>10} {'× ref':>7} {'ms/match':>9} {'queries':>8} {'target':>10}")

    def row(label: str, matches: str, rate: float, ms: float, queries: str, target: str = "") -> None:
        shown = f"{rate:>10,.0f} {reference.ratio(rate):>7}" if rate else f"{'':>10} {'':>7}"
        print(f"{label:<46} {matches:>8} {shown} {ms:>9.2f} {queries:>8} {target:>10}")

    rate = count / path
    verdict = f"≥{TARGET_PER_SECOND:g} {'ok' if rate >= TARGET_PER_SECOND else 'MISSED'}"
    row(
        "ready → ready → report → confirm, 1 process",
        f"{count:,}",
        rate,
        1000 * path / count,
        f"{path_queries:.1f}",
        verdict,
    )
    for step in STEPS:
        row(f"  of which {step}", "", 0.0, 1000 * seconds[step] / count, f"{logs[step].count / sample:.1f}")
    pairing = logs["pairing"].count / sample
    row("  before it: pairing (2 × queue_join)", "", 0.0, 1000 * seconds["pairing"] / count, f"{pairing:.1f}")
    with_pairing = path + seconds["pairing"]
    row(
        "pairing + the path, 1 process",
        f"{count:,}",
        count / with_pairing,
        1000 * with_pairing / count,
        f"{path_queries + pairing:.1f}",
    )
    if parallel:
        path_rate, overall = parallel
        verdict = f"≥{TARGET_PER_SECOND:g} {'ok' if path_rate >= TARGET_PER_SECOND else 'MISSED'}"
        total = f"{args.workers * count:,}"
        row(
            f"the path, {args.workers} processes (sum of rates)",
            total,
            path_rate,
            1000 / path_rate,
            f"{path_queries:.1f}",
            verdict,
        )
        row(
            f"pairing + the path, {args.workers} processes",
            total,
            overall,
            1000 / overall,
            f"{path_queries + pairing:.1f}",
        )


def print_statements(logs: dict[str, QueryLog], sample: int, seconds: dict[str, float]) -> None:
    for step, log in logs.items():
        db_ms, total_ms = 1000 * log.seconds / sample, 1000 * seconds[step] / sample
        print(
            f"\n{step}: {log.count / sample:.1f} statements per match, plus BEGIN and COMMIT; "
            f"{total_ms:.2f} ms, of which {db_ms:.2f} ms in execute(); sample of {sample}"
        )
        print(f"  {'statement':<58} {'per match':>9} {'ms each':>8}")
        for shape, number in sorted(log.shapes.items(), key=lambda item: -log.shape_seconds[item[0]]):
            print(f"  {shape:<58} {number / sample:>9.2f} {1000 * log.shape_seconds[shape] / number:>8.3f}")


if __name__ == "__main__":
    main()
