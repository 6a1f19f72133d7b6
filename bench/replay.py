"""Replaying a big ladder's rating log: ``ladder_replay`` on 1,000,000 matches, on PostgreSQL.

The ladder is built directly with COPY (through psycopg 3, not the services, which
would take an hour): ``--players`` users and their ``PlayerRating`` rows at the initial
values, ``--matches`` confirmed and rated 1 v 1 matches one ``--step`` apart, with their
two sides, two participants and one ``RatingEvent`` each (ids in played order). There is
no ``RatingChange`` yet: the first replay writes 2 × matches of them; the second one
first moves those to the superseded history, which is the cost of replaying a ladder with a history.

Each replay is ``ratings.services.ladder_replay(ladder=...)``, what ``manage.py
replay_ratings --ladder SLUG`` runs. It is split into phases with its progress callback
(before the first call, between the first and the last, after the last), and the
functions it calls (its module's helpers, a few ORM calls, COMMIT, where PostgreSQL runs
the deferred foreign-key checks) and its SQL statements are timed. After each run the
current history rows must be 2 × matches and the players' games must add up to 2 ×
matches. Peak memory (RSS) is printed too.

After the replays, this machine's write reference is measured on the same PostgreSQL
(bench/_reference.py: pgbench's simple-update transactions a second) and each replay's
matches per second is printed as a ratio to it, so runs on other machines compare.

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/replay.py [--players 100000] [--matches 1000000]``, or
``--players 2000 --matches 10000`` for a quick check.

Target: a replay of 1,000,000 matches in ≤ 60 s.
"""

from __future__ import annotations

import argparse
import array
import cProfile
import io
import pstats
import random
import resource
import sys
import time
from collections.abc import Iterable, Iterator
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pg
import _reference
from _phases import Phases, QueryLog, home_of, project_functions

TARGET_SECONDS = 60.0
TARGET_MATCHES = 1_000_000


def rss_gib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


class Progress:
    """One self-overwriting line on stderr."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.shown = 0.0

    def __call__(self, text: str, *, done: bool = False) -> None:
        now = time.perf_counter()
        if not done and now - self.shown < 1.0:
            return
        self.shown = now
        elapsed = now - self.started
        print(f"\r==> {text} ({elapsed:.0f} s)\033[K", end="\n" if done else "", file=sys.stderr, flush=True)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def constant_columns(model, given: Iterable[str], now) -> dict[str, object]:
    """Every column of ``model`` not in ``given``, with its default as the database gets it.

    So the COPY still works when someone adds a column with a default; a new required
    column without one stops the build with its name.
    """
    from django.db import connection

    given = set(given)
    constants = {}
    for field in model._meta.concrete_fields:
        if field.column in given:
            continue
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            value = now
        else:
            value = field.get_default()
        if value is None and not field.null:
            raise SystemExit(f"error: {model._meta.label}.{field.name} needs a value: teach bench/replay.py about it")
        constants[field.column] = field.get_db_prep_save(value, connection)
    return constants


def copy_rows(pg, model, columns: list[str], rows: Iterator[tuple], total: int, progress: Progress, now) -> None:
    """COPY ``rows`` (values for ``columns``) into ``model``'s table; other columns get their defaults."""
    constants = constant_columns(model, columns, now)
    names = ", ".join(_quote(name) for name in [*columns, *constants])
    tail = tuple(constants.values())
    table = model._meta.db_table
    every = max(1, total // 20)
    with pg.cursor() as cursor, cursor.copy(f"COPY {_quote(table)} ({names}) FROM STDIN") as copy:
        write = copy.write_row
        for number, row in enumerate(rows, start=1):
            write(row + tail)
            if number % every == 0:
                progress(f"build: {table} {number:,}/{total:,} rows")
    progress(f"build: {table} {total:,} rows", done=True)


def next_id(pg, model) -> int:
    with pg.cursor() as cursor:
        cursor.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {_quote(model._meta.db_table)}")
        return cursor.fetchone()[0]


def sync_sequence(pg, model) -> None:
    table = _quote(model._meta.db_table)
    with pg.cursor() as cursor:
        cursor.execute(f"SELECT setval(pg_get_serial_sequence(%s, 'id'), (SELECT max(id) FROM {table}))", [table])


def build(args: argparse.Namespace):
    """The ladder, its members and its matches, by COPY. Returns the ladder."""
    import psycopg
    from django.db import connection
    from django.utils import timezone

    from accounts.models import User
    from ladder.models import Confirmation, Ladder, Match, MatchSide, MatchStatus, Participant
    from ratings.models import EventKind, PlayerRating, RatingEvent

    started = time.perf_counter()
    progress = Progress(started)
    now = timezone.now()
    tag = f"{int(time.time()) % 1_000_000:06d}"
    ladder = Ladder.objects.create(name=f"Replay bench {tag}", slug=f"replay-bench-{tag}", game="Benchmark")
    step = timedelta(seconds=args.step)
    first_game = now - step * (args.matches + 10)
    joined = first_game - timedelta(days=1)

    connection.ensure_connection()
    pg = connection.connection
    try:
        pg.execute("SET session_replication_role = replica")  # skip the FK triggers: the rows are built consistent
        skipped_fk = True
    except psycopg.errors.InsufficientPrivilege:  # not a superuser: keep the checks
        skipped_fk = False

    rng = random.Random(args.seed)
    players, matches = args.players, args.matches
    first_of, second_of, first_won = array.array("q"), array.array("q"), bytearray(matches)
    for number in range(matches):
        a = rng.randrange(players)
        b = rng.randrange(players - 1)
        first_of.append(a)
        second_of.append(b + 1 if b >= a else b)
        first_won[number] = rng.random() < 0.5

    user0 = next_id(pg, User)
    copy_rows(
        pg,
        User,
        ["id", "username", "password"],
        ((user0 + n, f"rp{tag}_{n}", "!") for n in range(players)),
        players,
        progress,
        now,
    )
    rating0 = next_id(pg, PlayerRating)
    initial = (ladder.pk, ladder.initial_rating, ladder.initial_rd, ladder.initial_volatility, joined, joined)
    copy_rows(
        pg,
        PlayerRating,
        ["id", "player_id", "ladder_id", "rating", "rd", "volatility", "rd_as_of", "joined_at"],
        ((rating0 + n, user0 + n, *initial) for n in range(players)),
        players,
        progress,
        now,
    )
    match0 = next_id(pg, Match)
    confirmed, trusted = MatchStatus.CONFIRMED.value, Confirmation.TRUSTED.value
    columns = ["id", "ladder_id", "status", "played_at", "reported_at", "confirmed_at", "confirmation", "rated_at"]
    copy_rows(
        pg,
        Match,
        columns,
        (
            (match0 + n, ladder.pk, confirmed, at, at, at, trusted, at)
            for n, at in ((n, first_game + step * n) for n in range(matches))
        ),
        matches,
        progress,
        now,
    )
    side0 = next_id(pg, MatchSide)
    copy_rows(
        pg,
        MatchSide,
        ["id", "match_id", "index", "placement"],
        (
            (side0 + 2 * n + index, match0 + n, index, 1 if first_won[n] == (index == 0) else 2)
            for n in range(matches)
            for index in (0, 1)
        ),
        2 * matches,
        progress,
        now,
    )
    participant0 = next_id(pg, Participant)
    copy_rows(
        pg,
        Participant,
        ["id", "match_id", "side_id", "player_id"],
        (
            (participant0 + 2 * n + index, match0 + n, side0 + 2 * n + index, user0 + who[n])
            for n in range(matches)
            for index, who in ((0, first_of), (1, second_of))
        ),
        2 * matches,
        progress,
        now,
    )
    event0 = next_id(pg, RatingEvent)
    match_kind = EventKind.MATCH.value
    copy_rows(
        pg,
        RatingEvent,
        ["id", "ladder_id", "kind", "match_id", "at"],
        ((event0 + n, ladder.pk, match_kind, match0 + n, first_game + step * n) for n in range(matches)),
        matches,
        progress,
        now,
    )
    if skipped_fk:
        pg.execute("SET session_replication_role = DEFAULT")
    for model in (User, PlayerRating, Match, MatchSide, Participant, RatingEvent):
        sync_sequence(pg, model)
    loaded = time.perf_counter() - started
    progress("build: VACUUM ANALYZE")
    for model in (User, PlayerRating, Match, MatchSide, Participant, RatingEvent):
        pg.execute(f"VACUUM ANALYZE {_quote(model._meta.db_table)}")
    progress("build: VACUUM ANALYZE done", done=True)
    total = time.perf_counter() - started
    rows = 2 * players + 6 * matches
    fk = "FK checks skipped (session_replication_role = replica)" if skipped_fk else "FK checks on"
    print(f"build: {rows:,} rows by COPY in {loaded:.1f} s ({rows / loaded:,.0f} rows/s, {fk}),")
    print(f"       VACUUM ANALYZE {total - loaded:.1f} s, {total:.1f} s in all; ladder {ladder.slug}")
    return ladder


PER_EVENT = {"apply_match", "apply_adjustment", "match_layout", "match_changes", "adjustment_change", "change_values"}
PER_EVENT |= {"_adjustment_event", "initial_standing", "engine_settings"}


def replay_targets(*, fine: bool) -> list[tuple[object, str]]:
    """What ``ladder_replay`` calls, looked up where it looks them up (wherever it lives).

    Functions called once per event are left out unless ``fine``: their wrappers would
    add about a second per million calls.
    """
    from django.db import connections
    from django.db.models import QuerySet

    from ratings import sql
    from ratings.services import ladder_replay

    home = home_of(ladder_replay)
    targets = [(owner, name) for owner, name in project_functions(home, sql) if fine or name not in PER_EVENT]
    targets = [(owner, name) for owner, name in targets if name != "ladder_replay"]
    targets += [(QuerySet, "bulk_create"), (QuerySet, "update"), (QuerySet, "bulk_update"), (QuerySet, "count")]
    # COMMIT is where PostgreSQL runs the deferred foreign-key checks of every new row.
    targets.append((type(connections["default"]), "commit"))
    return targets


def replay(ladder, args: argparse.Namespace, run: int) -> float:
    from django.db import connection

    from ratings.services import ladder_replay

    marks: dict[str, float] = {}
    progress = Progress(time.perf_counter())

    def on_progress(done: int, total: int) -> None:
        marks.setdefault("first", time.perf_counter())
        marks["last"] = time.perf_counter()
        if done % 100_000 == 0 or done == total:
            progress(f"replay {run}: {done:,}/{total:,} events", done=done == total)

    queries = QueryLog()
    targets = replay_targets(fine=args.fine)
    profiler = cProfile.Profile() if args.profile and run == 1 else None
    with Phases(targets) as phases, connection.execute_wrapper(queries):
        started = time.perf_counter()
        if profiler:
            profiler.enable()
        stats = ladder_replay(ladder=ladder, progress=on_progress)
        if profiler:
            profiler.disable()
        seconds = time.perf_counter() - started
    ended = started + seconds

    before = marks.get("first", ended) - started
    loop = marks.get("last", ended) - marks.get("first", ended)
    after = ended - marks.get("last", ended)
    rate = stats.matches / seconds if seconds else 0.0
    scaled = seconds * TARGET_MATCHES / max(stats.matches, 1)
    verdict = "ok" if scaled <= TARGET_SECONDS else "MISSED"
    note = "" if stats.matches == TARGET_MATCHES else f" (scaled to 1M matches: {scaled:.1f} s)"
    print(
        f"\nreplay {run}: {seconds:.1f} s for {stats.matches:,} matches, {rate:,.0f} matches/s,"
        f" target ≤ {TARGET_SECONDS:g} s for 1M {verdict}{note}"
    )
    print(f"  {stats.changes:,} history rows written, {stats.players:,} players, peak RSS {rss_gib():.2f} GiB")
    print(f"  phases: before the first progress call {before:.1f} s, loop {loop:.1f} s, after the last {after:.1f} s")
    print(f"  {'function (inclusive)':<50} {'calls':>10} {'seconds':>9}")
    for label, calls, spent in phases.rows():
        print(f"  {label:<50} {calls:>10,} {spent:>9.2f}")
    print(f"  {'SQL statement (execute() only: not COPY, FETCH)':<50} {'count':>10} {'seconds':>9}")
    for shape, count in sorted(queries.shapes.items(), key=lambda item: -queries.shape_seconds[item[0]]):
        print(f"  {shape:<50} {count:>10,} {queries.shape_seconds[shape]:>9.2f}")
    check(ladder, args.matches)
    if profiler:
        for key in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(key).print_stats(35)
            print(f"\ncProfile of replay {run}, by {key}:")
            print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))
    return seconds


def check(ladder, matches: int) -> None:
    from django.db.models import Sum

    from ratings.models import PlayerRating, RatingChange, SupersededChange

    current = RatingChange.objects.filter(ladder=ladder).count()
    games = PlayerRating.objects.filter(ladder=ladder).aggregate(total=Sum("games"))["total"] or 0
    history = current + SupersededChange.objects.filter(ladder=ladder).count()
    good = current == 2 * matches and games == 2 * matches
    print(
        f"  check: current history rows {current:,}, sum of games {games:,}, expected {2 * matches:,} each:"
        f" {'ok' if good else 'WRONG'} ({history:,} history rows in all)"
    )
    if not good:
        raise SystemExit("error: the replay did not produce one current history row per player per match")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2, help="replays, one after the other")
    parser.add_argument("--step", type=float, default=30.0, help="seconds between two matches' played-at times")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--fine", action="store_true", help="also time the per-match functions (adds ~1 µs a call)")
    parser.add_argument("--profile", action="store_true", help="cProfile the first replay (slow: use small sizes)")
    parser.add_argument(
        "--pg-setting", action="append", default=[], metavar="NAME=VALUE", help="for the throwaway server"
    )
    args = parser.parse_args()
    if args.players < 2 or args.matches < 1:
        parser.error("need at least 2 players and 1 match")

    with _pg.database(args.pg_setting) as url:
        try:
            _pg.setup_django(url)
            print(f"{_pg.versions()}, {args.players:,} players, {args.matches:,} 1 v 1 matches")
            ladder = build(args)
            times = [replay(ladder, args, run) for run in range(1, args.runs + 1)]
            _pg.log("reference: pgbench simple-update on the same PostgreSQL")
            reference = _reference.pgbench_simple_update(url)
            print(f"\n{reference.line()}")
            print(f"{'replay':<40} {'seconds':>8} {'matches/s':>10} {'× ref':>7} {'target':>12}")
            for run, seconds in enumerate(times, start=1):
                what = "first (no history yet)" if run == 1 else "again (supersedes the history)"
                scaled = seconds * TARGET_MATCHES / args.matches
                verdict = f"≤{TARGET_SECONDS:g} s {'ok' if scaled <= TARGET_SECONDS else 'MISSED'}"
                rate = args.matches / seconds
                print(f"{what:<40} {seconds:>8.1f} {rate:>10,.0f} {reference.ratio(rate):>7} {verdict:>12}")
            print("× ref: matches replayed per second ÷ pgbench simple-update transactions per second")
        finally:
            _pg.close_django()


if __name__ == "__main__":
    main()
