"""Confirmed-and-rated matches per second through the service layer, on PostgreSQL.

A ladder of ``--players`` members (made with ``ladder_join``) and a trusted reporter (on
``ladder.trusted_reporters``) get ``--matches`` random 1 v 1 results through
``match_report``: each call validates, records, confirms and rates the match in one
transaction. Then ``--two-step`` more matches take the participants' path: one player
reports (``match_report``), the opponent confirms (``match_confirm``, which rates it).
``played_at`` increases by 11 minutes a match, so no report is a duplicate of another.

Queries are counted on ``--sample`` further matches of each path with an execute
wrapper that also times them, which splits the time into statements (server, round trip,
driver) and the rest (Python: ORM, services, engine). The same sample is then run with
every service function and the main ORM calls timed (inclusive). ``--profile N`` adds a
cProfile of N more trusted reports, and ``--server-cpu N`` PostgreSQL's CPU time a report
by statement over N more (``_cpu.StatementCpu``: the backend's CPU read from ``/proc``
around each statement and the commit). The reporter's and players' ``User`` objects are
reused, so permission look-ups are cached on them after the first report (a request
would load the user again).

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/report.py [--players 200] [--matches 2000]``.

Target: ≥ 300 trusted reports per second.

Notifications: ``--rounds`` pairs of rounds of trusted reports, alternately with the
notifications (the players' "match rated" rows, inserted by the report's own statement,
and the webhook check) and without them (``ladder.matches.notices`` patched to tell
nobody), so both run on the same machine in the same minutes. Target: with ≥ 90% of without.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _cpu
import _pg
import _reference
from _ladder import STEP, make_ladder
from _ladder import now as _now
from _phases import Phases, QueryLog, home_of, project_functions

TARGET_PER_SECOND = 300.0
TARGET_WITH_NOTIFICATIONS = 0.90  # trusted reports with notifications, as a share of the rate without


class Clock:
    """Increasing played-at instants, all in the past."""

    def __init__(self) -> None:
        self.next = _now() - STEP * 90_000

    def __call__(self):
        value = self.next
        self.next += STEP
        return value


def trusted_runner(ladder, users, reporter, rng: random.Random, clock: Clock) -> Callable[[int], int]:
    import ladder.matches.reporting as matches
    from ladder.matches.checks import SideInput

    def run(count: int) -> int:
        for _ in range(count):
            a, b = rng.sample(users, 2)
            winner = rng.random() < 0.5
            matches.match_report(
                ladder=ladder,
                reporter=reporter,
                sides=[SideInput([a], 1 if winner else 2), SideInput([b], 2 if winner else 1)],
                played_at=clock(),
            )
        return count

    return run


def two_step_runner(ladder, users, rng: random.Random, clock: Clock, split: dict[str, float]) -> Callable[[int], int]:
    """Participant reports, opponent confirms; ``split`` collects the seconds of each step."""
    import ladder.matches.reporting as matches
    from ladder.matches.checks import SideInput

    def run(count: int) -> int:
        for _ in range(count):
            a, b = rng.sample(users, 2)
            winner = rng.random() < 0.5
            started = time.perf_counter()
            match = matches.match_report(
                ladder=ladder,
                reporter=a,
                sides=[SideInput([a], 1 if winner else 2), SideInput([b], 2 if winner else 1)],
                played_at=clock(),
            )
            reported = time.perf_counter()
            matches.match_confirm(match=match, user=b)
            split["report"] += reported - started
            split["confirm"] += time.perf_counter() - reported
        return count

    return run


def timed(run: Callable[[int], int], count: int) -> float:
    started = time.perf_counter()
    run(count)
    return time.perf_counter() - started


def counted(run: Callable[[int], int], count: int, *, show_sql: bool) -> tuple[QueryLog, float]:
    from django.db import connection

    queries = QueryLog()
    with connection.execute_wrapper(queries):
        queries.record = show_sql
        run(1)  # one match alone, to show its statements
        queries.record = False
        queries.reset()
        started = time.perf_counter()
        run(count)
        elapsed = time.perf_counter() - started
    return queries, elapsed


def print_queries(title: str, queries: QueryLog, matches: int, elapsed: float) -> None:
    print(f"\n{title}: {queries.count / matches:.1f} queries per match, plus BEGIN and COMMIT; sample of {matches}")
    db_ms = 1000 * queries.seconds / matches
    total_ms = 1000 * elapsed / matches
    print(
        f"  {total_ms:.2f} ms per match: {db_ms:.2f} ms in execute() (server, round trip, driver),"
        f" {total_ms - db_ms:.2f} ms elsewhere (Python: ORM, services, engine; BEGIN/COMMIT)"
    )
    print(f"  {'statement':<58} {'per match':>9} {'ms each':>8}")
    for shape, count in sorted(queries.shapes.items(), key=lambda item: -queries.shape_seconds[item[0]]):
        each = 1000 * queries.shape_seconds[shape] / count
        print(f"  {shape:<58} {count / matches:>9.2f} {each:>8.3f}")


def service_targets() -> list[tuple[object, str]]:
    """The project functions and ORM calls a report goes through, for ``_phases.Phases``.

    Every function the match and rating services call by a global name is wrapped, so the
    table follows the services as they are refactored.
    """
    from django.db import connections
    from django.db.models import Model, QuerySet

    import ladder.matches.reporting as matches
    from ratings.services import rating_apply_match

    targets = project_functions(matches, home_of(rating_apply_match))
    targets += [(QuerySet, "create"), (QuerySet, "bulk_create"), (QuerySet, "bulk_update"), (Model, "save")]
    targets.append((type(connections["default"]), "commit"))
    return targets


def print_phases(title: str, run: Callable[[int], int], count: int) -> None:
    with Phases(service_targets()) as phases:
        run(count)
    print(f"\n{title}: inclusive time per match by function (nested rows overlap), {count} matches")
    print(f"  {'function':<46} {'calls/match':>11} {'ms/match':>9}")
    for label, calls, seconds in phases.rows():
        print(f"  {label:<46} {calls / count:>11.2f} {1000 * seconds / count:>9.3f}")


def print_server_cpu(title: str, run: Callable[[int], int], count: int) -> None:
    """PostgreSQL's CPU a match, by statement (``_cpu.StatementCpu``), over ``count`` matches."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with _cpu.StatementCpu(pid) as spent:
        run(count)
    total = sum(seconds for _, _, seconds in spent.rows())
    print(f"\n{title}: PostgreSQL's CPU, {1000 * total / count:.2f} ms a match, by statement ({count} matches)")
    print(f"  {'statement':<58} {'per match':>9} {'ms a match':>10}")
    for label, runs, seconds in spent.rows():
        if seconds:
            print(f"  {label:<58} {runs / count:>9.2f} {1000 * seconds / count:>10.3f}")


def profile(run: Callable[[int], int], count: int, top: int, what: str = "trusted reports") -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    run(count)
    profiler.disable()
    for key in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(key).print_stats(top)
        print(f"\ncProfile of {count} {what}, by {key}:")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--matches", type=int, default=2_000, help="trusted reports timed")
    parser.add_argument("--two-step", type=int, default=1_000, help="report + confirm pairs timed")
    parser.add_argument("--sample", type=int, default=200, help="matches of each path with queries counted")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds with and without notifications")
    parser.add_argument("--show-sql", action="store_true", help="print every statement of one trusted report")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile N more trusted reports")
    parser.add_argument(
        "--server-cpu", type=int, default=0, metavar="N", help="PostgreSQL's CPU by statement over N trusted reports"
    )
    args = parser.parse_args()

    with _pg.database() as url:
        try:
            _pg.setup_django(url)
            bench(args, url)
        finally:
            _pg.close_django()


@contextlib.contextmanager
def notifications_off() -> Iterator[None]:
    """The report path as before notifications: nobody in the batch, no webhook check."""
    from ladder.matches import notices

    rated_batch, emit_rated = notices.rated_batch, notices.emit_rated
    notices.rated_batch = lambda **kwargs: notices.Batch(notices.Kind.RATED, {})  # type: ignore[assignment]
    notices.emit_rated = lambda **kwargs: None  # type: ignore[assignment]
    try:
        yield
    finally:
        notices.rated_batch, notices.emit_rated = rated_batch, emit_rated


def with_and_without(run: Callable[[int], int], count: int, rounds: int) -> tuple[float, float]:
    """Trusted reports per second with and without notifications, alternating ``rounds`` times."""
    seconds = {"with": 0.0, "without": 0.0}
    for _ in range(rounds):
        seconds["with"] += timed(run, count)
        with notifications_off():
            seconds["without"] += timed(run, count)
    return rounds * count / seconds["with"], rounds * count / seconds["without"]


def bench(args: argparse.Namespace, url: str) -> None:
    started = time.perf_counter()
    ladder, users, reporter = make_ladder(args.players, args.seed)
    _pg.log(f"ladder {ladder.slug}: {args.players} members in {time.perf_counter() - started:.1f} s")
    rng = random.Random(args.seed)
    clock = Clock()

    trusted = trusted_runner(ladder, users, reporter, rng, clock)
    trusted(args.warmup)
    trusted_seconds = timed(trusted, args.matches)
    trusted_queries, trusted_sample = counted(trusted, args.sample, show_sql=args.show_sql)
    with_rate, without_rate = with_and_without(trusted, args.matches // (2 * args.rounds) or 1, args.rounds)

    split = {"report": 0.0, "confirm": 0.0}
    two_step = two_step_runner(ladder, users, rng, clock, split)
    two_step(args.warmup)
    split.update(report=0.0, confirm=0.0)
    two_step_seconds = timed(two_step, args.two_step)
    report_seconds, confirm_seconds = split["report"], split["confirm"]
    two_step_queries, two_step_sample = counted(two_step, args.sample, show_sql=False)

    _pg.log("reference: pgbench simple-update on the same PostgreSQL")
    reference = _reference.pgbench_simple_update(url)
    print(f"{_pg.versions()}, {args.players} players, 1 v 1, engine {ladder.engine}")
    print(reference.line())
    print(f"{'path':<46} {'matches':>8} {'matches/s':>10} {'× ref':>7} {'ms/match':>9} {'queries':>8} {'target':>10}")
    rate = args.matches / trusted_seconds
    verdict = f"≥{TARGET_PER_SECOND:g} {'ok' if rate >= TARGET_PER_SECOND else 'MISSED'}"
    rows = [
        ("trusted reporter: report = confirmed + rated", args.matches, trusted_seconds, trusted_queries, verdict),
        ("participant report, then opponent confirms", args.two_step, two_step_seconds, two_step_queries, ""),
    ]
    for label, count, seconds, queries, target in rows:
        per = queries.count / args.sample
        print(
            f"{label:<46} {count:>8,} {count / seconds:>10,.0f} {reference.ratio(count / seconds):>7} "
            f"{1000 * seconds / count:>9.2f} {per:>8.1f} {target:>10}"
        )
    for label, seconds in (("  of which match_report", report_seconds), ("  of which match_confirm", confirm_seconds)):
        print(f"{label:<46} {'':>8} {'':>10} {'':>7} {1000 * seconds / args.two_step:>9.2f}")
    share = with_rate / without_rate
    verdict = f"≥{TARGET_WITH_NOTIFICATIONS:.0%} {'ok' if share >= TARGET_WITH_NOTIFICATIONS else 'MISSED'}"
    print(
        f"\ntrusted reports, {args.rounds} alternating rounds: with notifications {with_rate:,.0f}/s "
        f"({reference.ratio(with_rate)}), without {without_rate:,.0f}/s ({reference.ratio(without_rate)}): "
        f"{share:.0%} (target {verdict})"
    )

    print_queries("trusted report", trusted_queries, args.sample, trusted_sample)
    print_queries("participant report + confirm", two_step_queries, args.sample, two_step_sample)
    print_phases("trusted report", trusted, args.sample)
    print_phases("participant report + confirm", two_step, args.sample)
    if args.show_sql:
        print("\nstatements of one trusted report:")
        for sql in trusted_queries.statements:
            print(f"  {sql}")
    if args.server_cpu:
        print_server_cpu("trusted report", trusted, args.server_cpu)
    if args.profile:
        profile(trusted, args.profile, top=40)


if __name__ == "__main__":
    main()
