"""The matchmaking queue on PostgreSQL: pairing time of ``queue_join`` and HTMX polls per second.

One ladder gets ``--waiting`` waiting searches, inserted directly with ``bulk_create`` (so
nobody is paired while building), and ``queue_timeout_seconds`` raised to a day so no
search expires during the run. Under the queue's rules (15%–85%) two players are pairable
within about ±300 rating points at RD 40, ±560 at RD 350, so 10,000 searches in 800–2200
cannot all be unpairable with each other; the waiting searches are of four kinds instead:

* the crowd: ratings uniform in 800–2200, RD 40–350 as of up to 30 days ago, no limit of
  their own. They could pair with each other, but nobody polls them: they are the
  partners the joins find.
* lonely pollers (``--lonely``): each alone at a rating far from everyone (5,000 and up,
  1,000 apart), so their window holds no other search: the common no-partner poll.
* crowded pollers (``--crowded``): each amid 2 × 16 decoys 10–160 points away (RD 40)
  whose own limit (``max_rating_gap`` 1) refuses the poller, so every poll reads both
  candidate lists in full and rejects them all: the worst no-partner poll.
* probe clusters (``--probes``): decoys alone around an empty centre.

Measured, DEBUG off:

1. ``queue_join`` of ``--joins`` fresh members, each once, as the view calls it (autocommit,
   the service's own transactions): most at a rating in 850–2150 (a partner exists), a
   ``--nobody`` share at a probe centre (nobody fits after a full scan). After each join,
   untimed, the partner goes back to waiting and the joiner's search and the match are
   deleted, so the same searches stay waiting. Also ``queue_try_pair`` alone, on new
   searches at the probe centres (nobody fits) and on the lonely pollers' (nobody in range).
2. Polls (GET /ladders/<slug>/queue/ with ``HX-Request: true``) by logged-in pollers (DB
   sessions, ``force_login``): through ``django.test.Client`` in this process, then through
   gunicorn on 127.0.0.1 (``--workers``, sync workers) loaded by ``wrk`` for ``--seconds``,
   with the pollers' session and CSRF cookies and ``X-Forwarded-Proto: https`` (the site
   runs behind a TLS proxy: ``SECURE_PROXY_SSL_HEADER_NAME``).

SQL is counted with ``CaptureQueriesContext`` on one call of each kind, as statements +
transaction control (BEGIN, COMMIT, SAVEPOINT; through a server add one ``SELECT 1`` a
request, the ``conn_health_checks`` health check), and timed by shape with an execute
wrapper (which BEGIN and COMMIT bypass). Every poll's answer must be 200, and every search
built must still be waiting at the end: nobody paired, expired or left.

After all that, this machine's references are measured on the same PostgreSQL
(bench/_reference.py): pgbench's simple-update transactions a second for the joins (a
join writes), ``SELECT 1`` round trips a second for ``queue_try_pair`` finding nobody and
the polls (reads). Each row is also printed as a ratio to its reference ("× ref": its
rate, or 1,000 ÷ its median ms for single calls), so runs on other machines compare.

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/matchmaking_queue.py [--waiting 10000] [--joins 500] [--workers 2 4]``.

Targets: ``queue_join`` median ≤ 5 ms; ≥ 500 polls per second.
"""

from __future__ import annotations

import argparse
import cProfile
import http.client
import io
import math
import os
import pstats
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import _pg
import _reference
from _phases import Phases, QueryLog, project_functions

TARGET_JOIN_MS = 5.0
TARGET_POLLS_PER_SECOND = 500.0
CROWD_LOW, CROWD_HIGH = 800.0, 2200.0
RD_LOW, RD_HIGH = 40.0, 350.0
CLUSTER_BASE, CLUSTER_STEP = 5_000.0, 1_000.0  # clusters far above the crowd, farther apart than any window
DECOY_STEP = 10.0  # decoys at 10, 20, … points from the centre, each way
DECOY_RD = 40.0
TIMEOUT_SECONDS = 86_400
HOST = "localhost"
SEARCHING = "Searching for an opponent"


# The build ---------------------------------------------------------------------------------


@dataclass
class Queue:
    ladder: object
    crowd: int
    decoys: int
    lonely: list = field(default_factory=list)  # User
    crowded: list = field(default_factory=list)  # User
    probe_centres: list[float] = field(default_factory=list)
    probers: list = field(default_factory=list)  # (User, centre) for queue_try_pair alone
    joiners: Iterator = field(default_factory=lambda: iter(()))  # (User, nobody): the timed joins
    pools: dict = field(default_factory=dict)  # nobody -> iterator of (User, nobody): the samples


def each_way() -> int:
    from matchmaking import window

    return window.CANDIDATES_EACH_WAY


def build(args: argparse.Namespace) -> Queue:
    from django.db import connection, transaction
    from django.utils import timezone

    from accounts.models import User
    from ladder.models import Ladder
    from matchmaking.models import EntryStatus, QueueEntry
    from ratings.models import PlayerRating

    started = time.perf_counter()
    rng = random.Random(args.seed)
    now = timezone.now()
    tag = f"{int(time.time()) % 100_000:05d}{rng.randrange(1000):03d}"
    ways = each_way()
    offsets = [sign * DECOY_STEP * (n + 1) for n in range(ways) for sign in (-1, 1)]
    decoys = (args.crowded + args.probes) * len(offsets)
    crowd = args.waiting - args.lonely - args.crowded - decoys
    if crowd < 1_000:
        raise SystemExit(f"error: --waiting {args.waiting} leaves {crowd} for the crowd; need at least 1,000")

    # (rating, rd, rd_as_of, max_rating_gap, waits); the role of each row follows from its place.
    rows: list[tuple[float, float, object, int | None, bool]] = []
    for _ in range(crowd):
        age = timedelta(days=rng.uniform(0, 30))
        rows.append((rng.uniform(CROWD_LOW, CROWD_HIGH), rng.uniform(RD_LOW, RD_HIGH), now - age, None, True))
    centres = [CLUSTER_BASE + CLUSTER_STEP * k for k in range(args.lonely + args.crowded + args.probes)]
    lonely_centres = centres[: args.lonely]
    crowded_centres = centres[args.lonely : args.lonely + args.crowded]
    probe_centres = centres[args.lonely + args.crowded :]
    rows += [(centre, DECOY_RD, now, None, True) for centre in lonely_centres + crowded_centres]
    decoy_centres = crowded_centres + probe_centres
    rows += [(centre + offset, DECOY_RD, now, 1, True) for centre in decoy_centres for offset in offsets]
    # Members who are not searching yet: the timed joiners (a --nobody share of them at a probe
    # centre), pools of each kind for the samples, then one prober per probe centre.
    timed = args.warmup + args.joins + args.profile
    pool = 2 * args.sample + 1
    nobody = [rng.random() < args.nobody for _ in range(timed)] + [False] * pool + [True] * pool
    for number, alone in enumerate(nobody):
        if alone:
            rows.append((probe_centres[number % len(probe_centres)], DECOY_RD, now, None, False))
        else:
            rating = rng.uniform(CROWD_LOW + 50, CROWD_HIGH - 50)
            rows.append((rating, rng.uniform(RD_LOW, RD_HIGH), now, None, False))
    rows += [(centre, DECOY_RD, now, None, False) for centre in probe_centres]

    with transaction.atomic():
        name, slug = f"Queue bench {tag}", f"queue-bench-{tag}"
        ladder = Ladder.objects.create(name=name, slug=slug, game="Benchmark", queue_timeout_seconds=TIMEOUT_SECONDS)
        users = User.objects.bulk_create(
            (User(username=f"qb{tag}_{number}", password="!") for number in range(len(rows))), batch_size=2_000
        )
        PlayerRating.objects.bulk_create(
            (
                PlayerRating(
                    ladder=ladder,
                    player=user,
                    rating=rating,
                    rd=rd,
                    volatility=ladder.initial_volatility,
                    rd_as_of=as_of,
                    joined_at=now - timedelta(days=60),
                )
                for user, (rating, rd, as_of, _, _) in zip(users, rows, strict=True)
            ),
            batch_size=2_000,
        )
        QueueEntry.objects.bulk_create(
            (
                QueueEntry(
                    ladder=ladder,
                    player=user,
                    status=EntryStatus.WAITING,
                    rating=rating,
                    rd=rd,
                    volatility=ladder.initial_volatility,
                    rd_as_of=as_of,
                    max_rating_gap=gap,
                    joined_at=now,
                    last_seen_at=now,
                )
                for user, (rating, rd, as_of, gap, waits) in zip(users, rows, strict=True)
                if waits
            ),
            batch_size=2_000,
        )
    with connection.cursor() as cursor:
        for model in (User, PlayerRating, QueueEntry):
            cursor.execute(f'VACUUM ANALYZE "{model._meta.db_table}"')

    first_poller = crowd
    queue = Queue(ladder=ladder, crowd=crowd, decoys=decoys, probe_centres=probe_centres)
    queue.lonely = users[first_poller : first_poller + args.lonely]
    queue.crowded = users[first_poller + args.lonely : first_poller + args.lonely + args.crowded]
    joiners = list(zip(users[args.waiting : args.waiting + len(nobody)], nobody, strict=True))
    queue.joiners = iter(joiners[:timed])
    queue.pools = {False: iter(joiners[timed : timed + pool]), True: iter(joiners[timed + pool :])}
    queue.probers = list(zip(users[args.waiting + len(nobody) :], probe_centres, strict=True))
    waiting = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING).count()
    if waiting != args.waiting:
        raise SystemExit(f"error: built {waiting} waiting searches, expected {args.waiting}")
    _pg.log(f"built {len(users):,} members, {waiting:,} waiting, in {time.perf_counter() - started:.1f} s")
    return queue


def still_waiting(queue: Queue, expected: int, when: str) -> None:
    """Every search built stays waiting: nobody was paired, expired or left during ``when``."""
    from matchmaking.models import EntryStatus, QueueEntry

    waiting = QueueEntry.objects.filter(ladder=queue.ladder, status=EntryStatus.WAITING).count()
    others = QueueEntry.objects.filter(ladder=queue.ladder).exclude(status=EntryStatus.WAITING).count()
    if waiting != expected or others:
        raise SystemExit(f"error: after {when}: {waiting:,} waiting (expected {expected:,}), {others:,} not waiting")


# Statistics --------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


@dataclass
class Row:
    label: str
    count: int
    median_ms: float | None = None
    p99_ms: float | None = None
    per_second: float | None = None
    queries: str = ""
    target: str = ""
    reference: str = ""  # "write" (pgbench) or "read" (SELECT 1): what "× ref" divides by


def verdict_ms(value: float, target: float) -> str:
    return f"≤{target:g} ms {'ok' if value <= target else 'MISSED'}"


def verdict_rate(value: float, target: float) -> str:
    return f"≥{target:g}/s {'ok' if value >= target else 'MISSED'}"


def print_rows(rows: list[Row], references: dict[str, _reference.Reference]) -> None:
    header = f"{'measure':<58} {'n':>7} {'median ms':>9} {'p99 ms':>8} {'per s':>7} {'× ref':>7}"
    print(f"{header} {'queries':>8} {'target':>13}")
    for row in rows:
        median = f"{row.median_ms:.2f}" if row.median_ms is not None else ""
        p99 = f"{row.p99_ms:.2f}" if row.p99_ms is not None else ""
        rate = f"{row.per_second:,.0f}" if row.per_second is not None else ""
        ratio = ""
        if row.reference:
            per_second = row.per_second if row.per_second is not None else 1000 / row.median_ms
            ratio = references[row.reference].ratio(per_second)
        print(
            f"{row.label:<58} {row.count:>7,} {median:>9} {p99:>8} {rate:>7} {ratio:>7} {row.queries:>8} "
            f"{row.target:>13}"
        )


def print_shapes(title: str, queries: QueryLog, calls: int) -> None:
    print(f"\n{title}: {queries.count / calls:.1f} statements per call, plus BEGIN/COMMIT; sample of {calls}")
    print(f"  {'statement':<58} {'per call':>9} {'ms each':>8} {'ms/call':>8}")
    for shape, count in sorted(queries.shapes.items(), key=lambda item: -queries.shape_seconds[item[0]]):
        seconds = queries.shape_seconds[shape]
        print(f"  {shape:<58} {count / calls:>9.2f} {1000 * seconds / count:>8.3f} {1000 * seconds / calls:>8.3f}")
    everything = "all statements (execute(): server, round trip, driver)"
    print(f"  {everything:<58} {'':>9} {'':>8} {1000 * queries.seconds / calls:>8.3f}")


def tally(statements: list[str]) -> str:
    """``13+2``: statements, then transaction control (BEGIN, COMMIT, SAVEPOINT …)."""
    control = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")
    transaction = sum(sql.strip().upper().startswith(control) for sql in statements)
    return f"{len(statements) - transaction}+{transaction}"


def statements_of(call: Callable[[], object]) -> list[str]:
    """The SQL of one call, with ``django.test.utils.CaptureQueriesContext``."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        call()
    return [query["sql"] for query in captured.captured_queries]


# Joins and pairing -------------------------------------------------------------------------


def reset_join(entry) -> None:
    """Undo one join: the partner waits again; the joiner's search and the match go."""
    from ladder.models import Match
    from matchmaking.models import EntryStatus, QueueEntry

    if entry.match_id is not None:
        QueueEntry.objects.filter(match_id=entry.match_id).exclude(pk=entry.pk).update(
            status=EntryStatus.WAITING, match=None, opponent=None, win_probability=None, ended_at=None
        )
    QueueEntry.objects.filter(pk=entry.pk).delete()
    if entry.match_id is not None:
        Match.objects.filter(pk=entry.match_id).delete()


@dataclass
class Joins:
    paired: list[float] = field(default_factory=list)
    nobody: list[float] = field(default_factory=list)
    unexpected: int = 0  # a join at a probe centre that paired, or one in the crowd that did not

    @property
    def all(self) -> list[float]:
        return self.paired + self.nobody


def run_joins(queue: Queue, count: int) -> Joins:
    """``count`` joins by the next fresh members, each timed, then undone (untimed)."""
    from matchmaking import services

    joins = Joins()
    for _ in range(count):
        user, alone = next(queue.joiners)
        started = time.perf_counter()
        entry = services.queue_join(ladder=queue.ladder, player=user)
        seconds = time.perf_counter() - started
        paired = entry.match_id is not None
        reset_join(entry)
        (joins.paired if paired else joins.nobody).append(seconds)
        joins.unexpected += paired == alone
    return joins


def join_sample(queue: Queue, count: int, *, alone: bool, wrapper) -> int:
    """``count`` joins of one kind (partner found or not) from its pool, through ``wrapper``."""
    from django.db import connection

    from matchmaking import services

    for done, (user, _) in enumerate(queue.pools[alone], start=1):
        with connection.execute_wrapper(wrapper):
            entry = services.queue_join(ladder=queue.ladder, player=user)
        reset_join(entry)
        if done == count:
            return done
    raise SystemExit("error: ran out of joiners")


def join_statements(queue: Queue, *, alone: bool) -> list[str]:
    from matchmaking import services

    user, _ = next(queue.pools[alone])
    entries = []
    statements = statements_of(lambda: entries.append(services.queue_join(ladder=queue.ladder, player=user)))
    reset_join(entries[0])
    return statements


def join_phases(queue: Queue, count: int, *, alone: bool) -> None:
    from matchmaking import services

    users = [next(queue.pools[alone])[0] for _ in range(count)]
    entries: list = []
    with Phases(service_targets()) as phases:
        started = time.perf_counter()
        for user in users:
            entries.append(services.queue_join(ladder=queue.ladder, player=user))
            reset_join(entries[-1])
        seconds = time.perf_counter() - started
    kind = "nobody fits" if alone else "partner found"
    print(f"\nqueue_join, {kind}: inclusive ms per join by function (nested rows overlap), {count} joins")
    print(f"  (reset after each join included in the ORM rows; {1000 * seconds / count:.2f} ms per join + reset)")
    print_phase_rows(phases, count)


def prober_entries(queue: Queue) -> list:
    """New waiting searches at the probe centres (inserted directly), ladder cached as after a join."""
    from django.utils import timezone

    from matchmaking.models import QueueEntry

    now = timezone.now()
    entries = QueueEntry.objects.bulk_create(
        QueueEntry(
            ladder=queue.ladder,
            player=user,
            rating=centre,
            rd=DECOY_RD,
            volatility=0.06,
            rd_as_of=now,
            joined_at=now,
            last_seen_at=now,
        )
        for user, centre in queue.probers
    )
    return entries


def entries_of(queue: Queue, users: list) -> list:
    from matchmaking.models import EntryStatus, QueueEntry

    entries = list(QueueEntry.objects.filter(ladder=queue.ladder, player__in=users, status=EntryStatus.WAITING))
    for entry in entries:
        entry.ladder = queue.ladder  # as queue_join hands it over
    return entries


def time_try_pair(entries: list, calls: int) -> tuple[list[float], int]:
    from matchmaking import pairing

    times, matched = [], 0
    for number in range(calls):
        entry = entries[number % len(entries)]
        started = time.perf_counter()
        match = pairing.queue_try_pair(entry=entry)
        times.append(time.perf_counter() - started)
        matched += match is not None
    return times, matched


# Polls -------------------------------------------------------------------------------------


def poll_url(queue: Queue) -> str:
    from django.urls import reverse

    return reverse("matchmaking:status", args=[queue.ladder.slug])


def logged_in_clients(users: list) -> list:
    from django.test import Client

    clients = []
    for user in users:
        client = Client(HTTP_HOST=HOST)
        client.force_login(user)
        clients.append(client)
    return clients


def poll(client, url: str):
    return client.get(url, secure=True, HTTP_HX_REQUEST="true")


def check_poll(response, who: str) -> None:
    text = response.content.decode()
    if response.status_code != 200 or SEARCHING not in text or "<html" in text:
        raise SystemExit(f"error: poll by {who}: HTTP {response.status_code}, not a waiting panel:\n{text[:600]}")


def client_polls(clients: list, url: str, count: int, wrapper=None) -> tuple[float, list[float], float]:
    """``count`` polls, round robin over ``clients``: (seconds, each poll's seconds, CPU seconds here)."""
    from django.db import connection

    times = []
    bad = 0
    cpu = time.process_time()
    started = time.perf_counter()
    with connection.execute_wrapper(wrapper) if wrapper else _nothing():
        for number in range(count):
            began = time.perf_counter()
            response = poll(clients[number % len(clients)], url)
            times.append(time.perf_counter() - began)
            bad += response.status_code != 200
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    if bad:
        raise SystemExit(f"error: {bad} of {count} polls did not answer 200")
    return seconds, times, cpu


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def service_targets() -> list[tuple[object, str]]:
    """Where a join's or a poll's time goes: the services, the view's helpers, sessions, auth, the ORM."""
    from django.contrib import auth
    from django.contrib.sessions.backends.db import SessionStore
    from django.db import connections
    from django.db.models import Model, QuerySet

    from matchmaking import pairing, selectors, services, store, views, window

    targets = project_functions(services, pairing, window, store, prefixes=("matchmaking.", "ladder.", "ratings."))
    targets += [(selectors, "panel_context")]
    targets += [(views, name) for name in ("_render", "render", "get_object_or_404")]
    targets += [(auth, "get_user"), (SessionStore, "load")]
    targets += [(QuerySet, name) for name in ("count", "create", "bulk_create", "update", "delete", "first")]
    targets += [(Model, "refresh_from_db"), (Model, "save")]
    targets.append((type(connections["default"]), "commit"))
    return targets


def print_phase_rows(phases: Phases, calls: int) -> None:
    print(f"  {'function':<46} {'calls/call':>10} {'ms/call':>8}")
    for label, count, seconds in phases.rows():
        print(f"  {label:<46} {count / calls:>10.2f} {1000 * seconds / calls:>8.3f}")


def poll_phases(title: str, clients: list, url: str, calls: int) -> None:
    with Phases(service_targets()) as phases:
        seconds, _, _ = client_polls(clients, url, calls)
    print(f"\n{title}: inclusive ms per poll by function (nested rows overlap), {calls} polls")
    print(f"  ({1000 * seconds / calls:.2f} ms a poll with the wrappers; the rest: Django's handler, middleware)")
    print_phase_rows(phases, calls)


def profile(title: str, run: Callable[[], object], top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(key).print_stats(top)
        print(f"\ncProfile of {title}, by {key}:")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))


def explain(queue: Queue) -> None:
    """The plans of the poll's candidate search (a crowded poller's) and of the panel's count."""
    from django.db import connection
    from django.utils import timezone

    from matchmaking import pairing
    from matchmaking.models import EntryStatus, QueueEntry

    me = entries_of(queue, queue.crowded[:1])[0]
    # The search is the first statement queue_try_pair sends (nobody fits a crowded poller).
    search = statements_of(lambda: pairing.queue_try_pair(entry=me, now=timezone.now()))[0]
    print("\nEXPLAIN ANALYZE of a crowded poller's candidate search, as queue_try_pair sends it:")
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN ANALYZE {search}")
        for (line,) in cursor.fetchall():
            print(f"  {line}")
    table = QueueEntry._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f'EXPLAIN ANALYZE SELECT COUNT(*) FROM "{table}" WHERE ladder_id = %s AND status = %s',
            [queue.ladder.pk, EntryStatus.WAITING.value],
        )
        plan = [row[0] for row in cursor.fetchall()]
    print("EXPLAIN ANALYZE of the panel's count of waiting searches:")
    for line in plan:
        print(f"  {line}")


# CPU accounting ----------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name: state, ppid, …, utime (11), stime (12)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def tree_cpu(pid: int | None) -> float:
    """CPU seconds of ``pid`` and its children (gunicorn's workers, PostgreSQL's backends)."""
    if pid is None:
        return 0.0
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and (int(entry.name) == pid or int(fields[1]) == pid):
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def postmaster_pid() -> int | None:
    """The PostgreSQL server's pid, if it runs on this machine (the parent of our backend)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    fields = _stat_fields(backend)
    try:
        comm = Path(f"/proc/{backend}/comm").read_text().strip()
    except OSError:
        return None
    return int(fields[1]) if fields and comm.startswith("postgres") else None


@dataclass
class Cpu:
    """CPU milliseconds per poll, by process."""

    label: str
    polls: int
    python: float  # this process (test client), or gunicorn's workers
    postgres: float | None
    wrk: float | None = None

    def row(self) -> str:
        postgres = f"{self.postgres:.2f}" if self.postgres is not None else "?"
        wrk = f"{self.wrk:.2f}" if self.wrk is not None else ""
        per_core = 1000 / (self.python + (self.postgres or 0.0))
        return f"  {self.label:<56} {self.python:>8.2f} {postgres:>9} {wrk:>6} {per_core:>14,.0f}"


def print_cpu(rows: list[Cpu]) -> None:
    print("\nCPU per poll, ms (Python: this process or gunicorn's workers; PostgreSQL: all its processes)")
    print(f"  {'run':<56} {'Python':>8} {'Postgres':>9} {'wrk':>6} {'polls/s a core':>14}")
    for row in rows:
        print(row.row())


def calibrate() -> str:
    """What the ORM costs on this machine (the round trip is the read reference, bench/_reference.py)."""
    from matchmaking.models import EntryStatus, QueueEntry

    builds = []
    for _ in range(2_000):
        started = time.perf_counter()
        query = (
            QueueEntry.objects.filter(ladder_id=1, status=EntryStatus.WAITING)
            .exclude(player_id__in={1})
            .filter(rating__gte=1000.0, rating__lte=1500.0)
            .order_by("-rating")[:16]
        ).query
        query.get_compiler(using="default").as_sql()
        builds.append(time.perf_counter() - started)
    return (
        "this machine: building + compiling one candidate query with the ORM"
        f" {1000 * statistics.median(builds):.3f} ms (median of 2,000)"
    )


# A real server -----------------------------------------------------------------------------


@contextmanager
def gunicorn(workers: int) -> Iterator[tuple[int, int]]:
    """gunicorn (sync workers) serving the site on 127.0.0.1, stopped on the way out."""
    port = _pg.free_port()
    env = {**os.environ, "SECURE_PROXY_SSL_HEADER_NAME": "HTTP_X_FORWARDED_PROTO", "ALLOWED_HOSTS": HOST}
    logfile = tempfile.NamedTemporaryFile(prefix="ladder-gunicorn.", suffix=".log", delete=False)  # noqa: SIM115
    command = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", str(workers), "--worker-class", "sync", "--log-level", "warning", "--backlog", "2048"]
    process = subprocess.Popen(
        command, cwd=_pg.ROOT, env=env, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"error: gunicorn exited ({process.returncode}):\n{Path(logfile.name).read_text()}")
            try:
                get(port, "/", {})
                break
            except (OSError, http.client.HTTPException) as error:  # refused, reset, timed out, cut short
                if time.monotonic() > deadline:
                    raise SystemExit(
                        f"error: gunicorn did not answer within 60 s (last: {type(error).__name__})"
                    ) from None
                time.sleep(0.2)
        _pg.log(f"gunicorn with {workers} workers on 127.0.0.1:{port} (pid {process.pid})")
        yield port, process.pid
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # the master stops its workers
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        logfile.close()
        Path(logfile.name).unlink(missing_ok=True)


WRK_SCRIPT = """
local cookies = {%(cookies)s}
local path = "%(path)s"
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  table.insert(threads, thread)
  counter = counter + 1
end

function init(args)
  step = tonumber(args[1])
  position = id
  bad = 0
end

function request()
  local cookie = cookies[(position %% #cookies) + 1]
  position = position + step
  return wrk.format("GET", path, {
    ["Host"] = "%(host)s", ["Cookie"] = cookie, ["HX-Request"] = "true", ["X-Forwarded-Proto"] = "https"})
end

function response(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total_bad = 0
  for _, thread in ipairs(threads) do total_bad = total_bad + thread:get("bad") end
  local errors = summary.errors
  io.write(string.format("BENCH %%d %%.6f %%d %%d %%.3f %%.3f %%.3f\\n", summary.requests, summary.duration / 1e6,
    total_bad, errors.connect + errors.read + errors.write + errors.status + errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.mean / 1000))
end
"""


@dataclass
class WrkResult:
    requests: int
    seconds: float
    bad: int
    errors: int
    p50_ms: float
    p99_ms: float


def cookies_of(clients: list, url: str) -> list[str]:
    """Each poller's session and CSRF cookies, as their browser sends them."""
    from django.conf import settings

    cookies = []
    for client in clients:
        if settings.CSRF_COOKIE_NAME not in client.cookies:
            poll(client, url)
        jar = [settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME]
        cookies.append("; ".join(f"{name}={client.cookies[name].value}" for name in jar if name in client.cookies))
    return cookies


def get(port: int, url: str, headers: dict[str, str]) -> tuple[int, str]:
    """One GET through the server, as from behind the TLS proxy."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", url, headers={"Host": HOST, "X-Forwarded-Proto": "https", **headers})
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        conn.close()


def server_check(port: int, url: str, cookie: str) -> None:
    status, text = get(port, url, {"Cookie": cookie, "HX-Request": "true"})
    if status != 200 or SEARCHING not in text:
        raise SystemExit(f"error: gunicorn answered {status}, not a waiting panel:\n{text[:600]}")


def wrk(port: int, url: str, cookies: list[str], *, seconds: float, connections: int, threads: int) -> WrkResult:
    binary = shutil.which("wrk")
    if binary is None:
        raise SystemExit("error: no wrk (apt-get install wrk), or pass --workers with no value to skip the server")
    quoted = ", ".join('"' + cookie.replace("\\", "\\\\").replace('"', '\\"') + '"' for cookie in cookies)
    with tempfile.NamedTemporaryFile("w", prefix="ladder-wrk.", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT % {"cookies": quoted, "path": url, "host": HOST})
    try:
        command = [binary, "-t", str(threads), "-c", str(connections), "-d", f"{seconds:g}s", "--timeout", "10s"]
        command += ["-s", script.name, f"http://127.0.0.1:{port}{url}", "--", str(threads)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60, check=False)
    finally:
        Path(script.name).unlink(missing_ok=True)
    line = next((line for line in done.stdout.splitlines() if line.startswith("BENCH ")), None)
    if done.returncode != 0 or line is None:
        raise SystemExit(f"error: wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    requests, duration, bad, errors, p50, p99, _ = line.split()[1:]
    return WrkResult(int(requests), float(duration), int(bad), int(errors), float(p50), float(p99))


# The run -----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, default=10_000, help="waiting searches in the ladder, all kinds")
    parser.add_argument("--lonely", type=int, default=200, help="pollers with nobody in their window")
    parser.add_argument("--crowded", type=int, default=100, help="pollers whose window holds 32 refusing decoys")
    parser.add_argument("--probes", type=int, default=20, help="clusters of decoys for joins that find nobody")
    parser.add_argument("--joins", type=int, default=500, help="queue_join calls timed")
    parser.add_argument("--nobody", type=float, default=0.1, help="share of joins at a probe centre")
    parser.add_argument("--pair-calls", type=int, default=500, help="queue_try_pair calls timed, each kind")
    parser.add_argument("--polls", type=int, default=3_000, help="test-client polls timed, each kind")
    parser.add_argument("--workers", type=int, nargs="*", default=[2, 4], help="gunicorn runs (none: skip)")
    parser.add_argument("--seconds", type=float, default=10.0, help="each wrk run")
    parser.add_argument("--connections", type=int, default=0, help="wrk connections (default 2 × workers)")
    parser.add_argument("--sample", type=int, default=50, help="calls of each kind with statements timed")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--show-sql", action="store_true", help="print the statements of one join and one poll")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile N joins and N polls")
    args = parser.parse_args()
    if min(args.lonely, args.crowded, args.probes) < 1 or not 0 <= args.nobody <= 1:
        parser.error("need at least one poller of each kind and one probe cluster, and --nobody in [0, 1]")

    with _pg.database() as url:
        try:
            _pg.setup_django(url)
            bench(args, database_url=url)
        finally:
            _pg.close_django()


def bench(args: argparse.Namespace, *, database_url: str) -> None:
    from django.conf import settings

    if settings.DEBUG:
        raise SystemExit("error: DEBUG is on")
    queue = build(args)
    rows: list[Row] = []
    details: list[Callable[[], None]] = []

    # 1. Joins.
    run_joins(queue, args.warmup)
    joins = run_joins(queue, args.joins)
    paired_sql = join_statements(queue, alone=False)
    nobody_sql = join_statements(queue, alone=True)
    paired_log, nobody_log = QueryLog(), QueryLog()
    paired_n = join_sample(queue, args.sample, alone=False, wrapper=paired_log)
    nobody_n = join_sample(queue, args.sample, alone=True, wrapper=nobody_log)
    still_waiting(queue, args.waiting, "the joins")
    for label, times, queries in (
        ("queue_join, all", joins.all, ""),
        ("  partner found (crowd, 850–2150)", joins.paired, tally(paired_sql)),
        (f"  nobody fits ({2 * each_way()} candidates read, all refused)", joins.nobody, tally(nobody_sql)),
    ):
        if not times:
            continue
        median = 1000 * statistics.median(times)
        target = verdict_ms(median, TARGET_JOIN_MS) if label.startswith("queue_join") else ""
        rows.append(Row(label, len(times), median, 1000 * percentile(times, 0.99), None, queries, target, "write"))
    if joins.unexpected:
        print(f"note: {joins.unexpected} joins did not go as planned (a crowd join unpaired, or a probe join paired)")
    details.append(lambda: print_shapes("queue_join, partner found", paired_log, paired_n))
    details.append(lambda: print_shapes("queue_join, nobody fits", nobody_log, nobody_n))
    details.append(lambda: join_phases(queue, args.sample, alone=False))
    details.append(lambda: join_phases(queue, args.sample, alone=True))

    # queue_try_pair alone.
    from matchmaking import pairing
    from matchmaking.models import QueueEntry

    probes = prober_entries(queue)
    for entry in probes:
        entry.ladder = queue.ladder
    lonely_entries = entries_of(queue, queue.lonely)
    for label, entries in (
        (f"queue_try_pair alone, nobody fits ({2 * each_way()} refused)", probes),
        ("queue_try_pair alone, nobody in range", lonely_entries),
    ):
        time_try_pair(entries, args.warmup)
        times, matched = time_try_pair(entries, args.pair_calls)
        if matched:
            raise SystemExit(f"error: {label}: {matched} calls paired")
        queries = tally(statements_of(lambda entry=entries[0]: pairing.queue_try_pair(entry=entry)))
        median, p99 = 1000 * statistics.median(times), 1000 * percentile(times, 0.99)
        rows.append(Row(label, len(times), median, p99, None, queries, reference="read"))
    QueueEntry.objects.filter(pk__in=[entry.pk for entry in probes]).delete()
    still_waiting(queue, args.waiting, "queue_try_pair")

    # 2. Polls through the test client.
    postmaster = postmaster_pid()
    cpu: list[Cpu] = []
    url = poll_url(queue)
    kinds = {"lonely": logged_in_clients(queue.lonely), "crowded": logged_in_clients(queue.crowded)}
    poll_sql = {}
    for kind, clients in kinds.items():
        for number, client in enumerate(clients):  # one poll each first: a waiting panel, CSRF cookie set
            check_poll(poll(client, url), f"{kind} poller {number}")
        poll_sql[kind] = statements_of(lambda client=clients[0], kind=kind: check_poll(poll(client, url), kind))
        postgres = tree_cpu(postmaster)
        seconds, times, python = client_polls(clients, url, args.polls)
        postgres = tree_cpu(postmaster) - postgres if postmaster else None
        ms = 1000 / args.polls
        cpu.append(Cpu(f"test client, {kind}", args.polls, python * ms, postgres * ms if postmaster else None))
        rate = args.polls / seconds
        label = f"polls, test client, {kind} pollers ({len(clients)} users)"
        queries = tally(poll_sql[kind])
        median, p99 = 1000 * statistics.median(times), 1000 * percentile(times, 0.99)
        target = verdict_rate(rate, TARGET_POLLS_PER_SECOND)
        rows.append(Row(label, args.polls, median, p99, rate, queries, target, "read"))
        log, calls = QueryLog(), 4 * args.sample
        client_polls(clients, url, calls, log)
        details.append(lambda kind=kind, log=log, calls=calls: print_shapes(f"poll, {kind} poller", log, calls))
        details.append(
            lambda kind=kind, clients=clients, calls=calls: poll_phases(
                f"poll, {kind} poller (test client)", clients, url, calls
            )
        )
    still_waiting(queue, args.waiting, "the test-client polls")

    # Polls through gunicorn + wrk.
    if args.workers:
        cookies = {kind: cookies_of(clients, url) for kind, clients in kinds.items()}
        for workers in args.workers:
            with gunicorn(workers) as (port, server):
                for kind in kinds:
                    server_check(port, url, cookies[kind][0])
                    connections = args.connections or max(4, 2 * workers)
                    before = tree_cpu(server), tree_cpu(postmaster), resource.getrusage(resource.RUSAGE_CHILDREN)
                    result = wrk(port, url, cookies[kind], seconds=args.seconds, connections=connections, threads=2)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    ms = 1000 / max(result.requests, 1)
                    cpu.append(
                        Cpu(
                            f"gunicorn {workers} workers, {kind}",
                            result.requests,
                            (tree_cpu(server) - before[0]) * ms,
                            (tree_cpu(postmaster) - before[1]) * ms if postmaster else None,
                            (after.ru_utime + after.ru_stime - before[2].ru_utime - before[2].ru_stime) * ms,
                        )
                    )
                    if result.bad or result.errors:
                        raise SystemExit(f"error: wrk: {result.bad} answers not 200, {result.errors} socket errors")
                    rate = result.requests / result.seconds
                    label = f"polls, gunicorn {workers} workers, wrk -c {connections}, {kind}"
                    target = verdict_rate(rate, TARGET_POLLS_PER_SECOND)
                    queries = f"{tally(poll_sql[kind])}+1"
                    rows.append(
                        Row(label, result.requests, result.p50_ms, result.p99_ms, rate, queries, target, "read")
                    )
        still_waiting(queue, args.waiting, "the gunicorn polls")

    _pg.log("references: pgbench simple-update (joins), SELECT 1 round trips (reads), on the same PostgreSQL")
    references = {
        "write": _reference.pgbench_simple_update(database_url),
        "read": _reference.select_one(database_url),
    }
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"{_pg.versions()}, {os.cpu_count()} CPUs, load average at the end {load}\n"
        f"ladder {queue.ladder.slug}: {args.waiting:,} waiting ="
        f" {queue.crowd:,} crowd (uniform {CROWD_LOW:g}–{CROWD_HIGH:g}, RD {RD_LOW:g}–{RD_HIGH:g})"
        f" + {args.lonely} lonely + {args.crowded} crowded pollers + {queue.decoys:,} decoys"
        f" ({args.crowded} + {args.probes} clusters of {2 * each_way()})"
    )
    print(f"write {references['write'].line()}\nread  {references['read'].line()}")
    print_rows(rows, references)
    print(
        "queries: SQL statements + BEGIN/COMMIT/SAVEPOINT (CaptureQueriesContext, one call);"
        " through a server +1: the per-request SELECT 1 health check (conn_health_checks)\n"
        "× ref: per second (1,000 ÷ median ms for single calls) ÷ the reference: write for queue_join,"
        " read for queue_try_pair finding nobody and the polls"
    )
    print(calibrate())
    print_cpu(cpu)
    for detail in details:
        detail()
    explain(queue)
    if args.show_sql:
        for title, statements in (
            ("one join, partner found", paired_sql),
            ("one join, nobody fits", nobody_sql),
            ("one poll, lonely poller", poll_sql["lonely"]),
            ("one poll, crowded poller", poll_sql["crowded"]),
        ):
            print(f"\nstatements of {title}:")
            for sql in statements:
                print(f"  {sql}")
    if args.profile:
        profile(f"{args.profile} joins", lambda: run_joins(queue, args.profile), top=35)
        clients = kinds["crowded"]
        profile(f"{args.profile} polls by crowded pollers", lambda: client_polls(clients, url, args.profile), top=45)
        still_waiting(queue, args.waiting, "the profiles")


if __name__ == "__main__":
    main()
