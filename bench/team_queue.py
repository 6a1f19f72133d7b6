"""The team and free-for-all queue on PostgreSQL (issue 16): the join that completes a game, and polls.

One ladder offers ``1v1,2v2,4v4,ffa4,teams4`` (uneven teams allowed) and gets ``--waiting``
waiting searches, inserted directly with ``bulk_create`` (so no game forms while building),
with ``queue_timeout_seconds`` raised to a day so none expires during the run:

* the crowd: ratings uniform in 800–2200, RD 40–350 as of up to 30 days ago. Each searches
  one to three formats (1 v 1 in a fifth of them; lila#8300: several at once); about a tenth
  search as parties of two (within 20 points of each other) in the team formats. Nobody
  polls them: they are the players the joins find.
* lonely pollers (``--lonely``): each alone at a rating far from everyone (5,000 and up,
  1,000 apart), searching all five formats: every poll reads nobody, the common poll.
* short pollers (``--short``): each at the centre of a cluster of searchers (RD 40, within
  60 points) with one player too few in every team format: 2 others in 2 v 2, in ``ffa4``
  and in ``teams4``, 6 in 4 v 4. Every poll reads them all in four formats, finds
  "3 of 4" and "7 of 8", and forms nothing: the costliest poll that forms no game.

Measured, DEBUG off:

1. ``queue_join`` of ``--joins`` fresh members (ratings 850–2150) as the view calls it
   (autocommit, the service's own transactions), each searching one format, in turn
   2v2, 4v4, ffa4, teams4, 1v1: every one completes a game at once with the crowd. After each
   join, untimed, the others go back to waiting and the joiner's search, the match and its
   notifications are deleted, so the crowd stays as built. Statements are counted on one
   join of each format (``CaptureQueriesContext``) and timed by shape on ``--sample`` of each.
2. Polls (GET /ladders/<slug>/queue/ with ``HX-Request: true``) by logged-in pollers:
   through ``django.test.Client`` here, then through gunicorn on 127.0.0.1 (``--workers``,
   sync workers) loaded by ``wrk`` for ``--seconds`` (bench/matchmaking_queue.py's set-up).

Then this machine's references on the same PostgreSQL (bench/_reference.py): pgbench's
simple-update transactions a second for the joins (they write), ``SELECT 1`` round trips a
second for the polls; each row is printed with its ratio to its reference ("× ref": its
rate, or 1,000 ÷ its median ms), so runs on other machines compare.

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/team_queue.py [--waiting 10000] [--joins 500] [--workers 2 4]``.

Targets (issue 16): the join that completes a game ≤ 10 ms median, ≤ 30 ms p99; ≥ 500 polls a second
through gunicorn and wrk (the test client's polls, one process in turn, are shown for comparison).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

import _pg
import _reference
import matchmaking_queue as mq
from _phases import Phases, QueryLog

TARGET_JOIN_MEDIAN_MS = 10.0
TARGET_JOIN_P99_MS = 30.0
TARGET_POLLS_PER_SECOND = 500.0
FORMATS = ["2v2", "4v4", "ffa4", "teams4", "1v1"]
TEAM_FORMATS = ["2v2", "4v4", "teams4"]
CROWD_LOW, CROWD_HIGH = 800.0, 2200.0
RD_LOW, RD_HIGH = 40.0, 350.0
PARTY_SHARE = 0.1
CLUSTER_BASE, CLUSTER_STEP = 5_000.0, 1_000.0
CLUSTER_RD = 40.0
# A short poller's cluster: how many others search each format (one player too few for each game).
SHORT_BY = {"2v2": 2, "ffa4": 2, "teams4": 2, "4v4": 6}
TIMEOUT_SECONDS = 86_400
SEARCHING = "Searching for"


@dataclass
class Queue:
    ladder: object
    crowd: int
    parties: int
    lonely: list = field(default_factory=list)
    short: list = field(default_factory=list)
    joiners: list = field(default_factory=list)  # (User, format code), in the order they join


def crowd_formats(rng: random.Random) -> tuple[list[str], bool]:
    """One crowd search's formats, and whether it searches as a party of two."""
    if rng.random() < PARTY_SHARE:
        return rng.sample(TEAM_FORMATS, rng.randint(1, 2)), True
    return rng.sample(FORMATS, rng.choice((1, 1, 2, 3))), False


def build(args: argparse.Namespace) -> Queue:
    from django.db import connection, transaction
    from django.utils import timezone

    from accounts.models import User
    from ladder import formats
    from ladder.models import Ladder
    from matchmaking.models import EntryStatus, Party, PartyMember, PartyStatus, QueueEntry
    from ratings.models import PlayerRating

    started = time.perf_counter()
    rng = random.Random(args.seed)
    now = timezone.now()
    tag = f"{int(time.time()) % 100_000:05d}{rng.randrange(1000):03d}"
    all_bits = formats.mask(FORMATS)
    cluster = [(code, offset) for code, count in SHORT_BY.items() for offset in range(count)]
    crowd_target = args.waiting - args.lonely - args.short * (1 + len(cluster))
    if crowd_target < 1_000:
        raise SystemExit(f"error: --waiting {args.waiting} leaves {crowd_target} for the crowd; need at least 1,000")

    # (rating, rd, rd_as_of, format bits, party number or None, waits)
    rows: list[tuple[float, float, object, int, int | None, bool]] = []
    party_count = 0
    while len(rows) < crowd_target:
        codes, party = crowd_formats(rng)
        rating, rd = rng.uniform(CROWD_LOW, CROWD_HIGH), rng.uniform(RD_LOW, RD_HIGH)
        as_of = now - timedelta(days=rng.uniform(0, 30))
        if party and len(rows) + 2 <= crowd_target:
            for _ in range(2):
                rows.append((rating + rng.uniform(-10, 10), rd, as_of, formats.mask(codes), party_count, True))
            party_count += 1
        else:
            rows.append((rating, rd, as_of, formats.mask(codes), None, True))
    crowd = len(rows)
    centres = [CLUSTER_BASE + CLUSTER_STEP * k for k in range(args.lonely + args.short)]
    rows += [(centre, CLUSTER_RD, now, all_bits, None, True) for centre in centres]  # the pollers
    for centre in centres[args.lonely :]:
        for number, (code, _) in enumerate(cluster):
            offset = 5.0 * (number + 1) * (1 if number % 2 else -1)
            rows.append((centre + offset, CLUSTER_RD, now, formats.FORMATS[code].bit, None, True))
    joiners = []
    # The timed joins take them in turn; then each format needs one for its statements and
    # 2 × --sample for the statement timings and the phases.
    needed = args.warmup + args.joins + args.profile + len(FORMATS) * (2 * args.sample + 2)
    for number in range(needed):
        rating = rng.uniform(CROWD_LOW + 50, CROWD_HIGH - 50)
        rows.append((rating, rng.uniform(RD_LOW, RD_HIGH), now, 0, None, False))
        joiners.append(FORMATS[number % len(FORMATS)])

    with transaction.atomic():
        name, slug = f"Team queue bench {tag}", f"team-queue-bench-{tag}"
        ladder = Ladder(
            name=name,
            slug=slug,
            game="Benchmark",
            queue_timeout_seconds=TIMEOUT_SECONDS,
            allow_teams=True,
            allow_uneven_teams=True,
            allow_free_for_all=True,
            max_players=8,
            queue_formats=",".join(FORMATS),
        )
        ladder.clean()  # the formats are the ladder's to offer
        ladder.save()
        users = User.objects.bulk_create(
            (User(username=f"tq{tag}_{number}", password="!") for number in range(len(rows))), batch_size=2_000
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
                for user, (rating, rd, as_of, _, _, _) in zip(users, rows, strict=True)
            ),
            batch_size=2_000,
        )
        leaders: dict[int, object] = {}
        for user, row in zip(users, rows, strict=True):
            if row[4] is not None:
                leaders.setdefault(row[4], user)
        parties = Party.objects.bulk_create(
            Party(ladder=ladder, leader=leaders[number], created_at=now) for number in range(party_count)
        )
        PartyMember.objects.bulk_create(
            (
                PartyMember(
                    party=parties[row[4]], ladder=ladder, player=user, status=PartyStatus.ACCEPTED, invited_at=now
                )
                for user, row in zip(users, rows, strict=True)
                if row[4] is not None
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
                    joined_at=now,
                    last_seen_at=now,
                    formats=bits,
                    party=parties[party] if party is not None else None,
                    party_size=2 if party is not None else 1,
                )
                for user, (rating, rd, as_of, bits, party, waits) in zip(users, rows, strict=True)
                if waits
            ),
            batch_size=2_000,
        )
    with connection.cursor() as cursor:
        for model in (User, PlayerRating, QueueEntry, Party, PartyMember):
            cursor.execute(f'VACUUM ANALYZE "{model._meta.db_table}"')

    queue = Queue(ladder=ladder, crowd=crowd, parties=party_count)
    queue.lonely = users[crowd : crowd + args.lonely]
    queue.short = users[crowd + args.lonely : crowd + args.lonely + args.short]
    first_joiner = len(rows) - len(joiners)
    queue.joiners = list(zip(users[first_joiner:], joiners, strict=True))
    waiting = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING).count()
    if waiting != args.waiting:
        raise SystemExit(f"error: built {waiting} waiting searches, expected {args.waiting}")
    _pg.log(
        f"built {len(users):,} members, {waiting:,} waiting ({party_count:,} parties of two),"
        f" in {time.perf_counter() - started:.1f} s"
    )
    return queue


def reset_join(entry) -> None:
    """Undo one join: the others wait again; the joiner's search, the match and its notices go."""
    from ladder.models import Match
    from matchmaking.models import EntryStatus, QueueEntry
    from notifications.models import Notification

    if entry.match_id is not None:
        QueueEntry.objects.filter(match_id=entry.match_id).exclude(pk=entry.pk).update(
            status=EntryStatus.WAITING, match=None, opponent=None, win_probability=None, ended_at=None
        )
    QueueEntry.objects.filter(pk=entry.pk).delete()  # before the match: a matched search must have one
    if entry.match_id is not None:
        Notification.objects.filter(match_id=entry.match_id).delete()
        Match.objects.filter(pk=entry.match_id).delete()


@dataclass
class Joins:
    times: dict[str, list[float]] = field(default_factory=lambda: {code: [] for code in FORMATS})
    unformed: int = 0

    @property
    def all(self) -> list[float]:
        return [seconds for times in self.times.values() for seconds in times]


class Joiners:
    def __init__(self, queue: Queue) -> None:
        self.rest = list(queue.joiners)

    def next(self, code: str | None = None):
        for index, (_user, wanted) in enumerate(self.rest):
            if code is None or wanted == code:
                return self.rest.pop(index)
        raise SystemExit(f"error: ran out of joiners for {code}")


def one_join(queue: Queue, user, code: str, wrapper=None) -> tuple[float, bool]:
    from contextlib import nullcontext

    from django.db import connection

    from matchmaking import services

    with connection.execute_wrapper(wrapper) if wrapper else nullcontext():
        started = time.perf_counter()
        entry = services.queue_join(ladder=queue.ladder, player=user, formats_wanted=[code])
        seconds = time.perf_counter() - started
    formed = entry.match_id is not None
    reset_join(entry)
    return seconds, formed


def run_joins(queue: Queue, joiners: Joiners, count: int) -> Joins:
    joins = Joins()
    for _ in range(count):
        user, code = joiners.next()
        seconds, formed = one_join(queue, user, code)
        if formed:
            joins.times[code].append(seconds)
        else:
            joins.unformed += 1
    return joins


def join_statements(queue: Queue, joiners: Joiners, code: str) -> list[str]:
    from matchmaking import services

    user, _ = joiners.next(code)
    entries: list = []
    statements = mq.statements_of(
        lambda: entries.append(services.queue_join(ladder=queue.ladder, player=user, formats_wanted=[code]))
    )
    if entries[0].match_id is None:
        print(f"note: the {code} join whose statements were counted formed no game")
    reset_join(entries[0])
    return statements


def join_phases(queue: Queue, joiners: Joiners, code: str, count: int) -> None:
    from django.core.cache import caches
    from django.db.models import QuerySet

    from matchmaking import forming, lifecycle
    from ratings.engines import balance

    targets = mq.service_targets()
    # service_targets() has the services' own functions (try_match, candidates, claim …) already.
    targets += [(forming, name) for name in ("try_form", "_form", "_around", "_best_game", "_create")]
    targets += [(forming, name) for name in ("_tell_formed", "_candidates_for", "_seat", "_anchor_rows")]
    targets += [(forming, "best_team_group"), (forming, "best_ffa_group"), (forming, "notify")]
    targets += [(balance, "best_team_group"), (balance, "best_ffa_group"), (lifecycle, "start")]
    targets += [(type(caches["default"]), "set")]  # the Redis round trip
    targets += [(QuerySet, "values_list")]
    users = [joiners.next(code)[0] for _ in range(count)]
    with Phases(targets) as phases:
        started = time.perf_counter()
        for user in users:
            one_join(queue, user, code)
        seconds = time.perf_counter() - started
    print(f"\nqueue_join of {code}, a game formed: inclusive ms per join by function (nested rows overlap), {count}")
    print(f"  ({1000 * seconds / count:.2f} ms per join + its untimed reset, wrappers included)")
    mq.print_phase_rows(phases, count)


def still_waiting(queue: Queue, expected: int, when: str) -> None:
    from matchmaking.models import EntryStatus, QueueEntry

    waiting = QueueEntry.objects.filter(ladder=queue.ladder, status=EntryStatus.WAITING).count()
    others = QueueEntry.objects.filter(ladder=queue.ladder).exclude(status=EntryStatus.WAITING).count()
    if waiting != expected or others:
        raise SystemExit(f"error: after {when}: {waiting:,} waiting (expected {expected:,}), {others:,} not waiting")


def check_poll(response, who: str) -> None:
    text = response.content.decode()
    if response.status_code != 200 or SEARCHING not in text or "<html" in text:
        raise SystemExit(f"error: poll by {who}: HTTP {response.status_code}, not a waiting panel:\n{text[:600]}")


def server_check(port: int, url: str, cookie: str) -> None:
    status, text = mq.get(port, url, {"Cookie": cookie, "HX-Request": "true"})
    if status != 200 or SEARCHING not in text:
        raise SystemExit(f"error: gunicorn answered {status}, not a waiting panel:\n{text[:600]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, default=10_000, help="waiting searches in the ladder, all kinds")
    parser.add_argument("--lonely", type=int, default=200, help="pollers with nobody in reach")
    parser.add_argument("--short", type=int, default=100, help="pollers one player short in every team format")
    parser.add_argument("--joins", type=int, default=500, help="joins timed (each forms a game)")
    parser.add_argument("--polls", type=int, default=2_000, help="test-client polls timed, each kind")
    parser.add_argument("--workers", type=int, nargs="*", default=[2, 4], help="gunicorn runs (none: skip)")
    parser.add_argument("--seconds", type=float, default=10.0, help="each wrk run")
    parser.add_argument("--connections", type=int, default=0, help="wrk connections (default 2 × workers)")
    parser.add_argument("--sample", type=int, default=30, help="joins of each format with statements timed")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile N joins")
    args = parser.parse_args()
    if min(args.lonely, args.short) < 1:
        parser.error("need at least one poller of each kind")
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
    joiners = Joiners(queue)
    rows: list[mq.Row] = []
    details: list[Callable[[], None]] = []

    # 1. Joins that complete a game.
    run_joins(queue, joiners, args.warmup)
    joins = run_joins(queue, joiners, args.joins)
    still_waiting(queue, args.waiting, "the joins")
    statements = {code: join_statements(queue, joiners, code) for code in FORMATS}
    logs = {}
    for code in FORMATS:
        log = QueryLog()
        for _ in range(args.sample):
            user, _ = joiners.next(code)
            one_join(queue, user, code, wrapper=log)
        logs[code] = log
        details.append(
            lambda code=code, log=log: mq.print_shapes(f"queue_join of {code}, game formed", log, args.sample)
        )
    still_waiting(queue, args.waiting, "the sampled joins")
    everything = joins.all
    median, p99 = 1000 * statistics.median(everything), 1000 * mq.percentile(everything, 0.99)
    target = f"{mq.verdict_ms(median, TARGET_JOIN_MEDIAN_MS)}; p99 {mq.verdict_ms(p99, TARGET_JOIN_P99_MS)}"
    rows.append(
        mq.Row("queue_join that forms a game, all formats", len(everything), median, p99, None, "", target, "write")
    )
    for code in FORMATS:
        times = joins.times[code]
        if times:
            median, p99 = 1000 * statistics.median(times), 1000 * mq.percentile(times, 0.99)
            target = f"{mq.verdict_ms(median, TARGET_JOIN_MEDIAN_MS)}; p99 {mq.verdict_ms(p99, TARGET_JOIN_P99_MS)}"
            label = f"  {code}"
            rows.append(mq.Row(label, len(times), median, p99, None, mq.tally(statements[code]), target, "write"))
    if joins.unformed:
        print(f"note: {joins.unformed} of {args.joins} timed joins formed no game (left out of the figures)")

    # 2. Polls through the test client.
    postmaster = mq.postmaster_pid()
    cpu: list[mq.Cpu] = []
    url = mq.poll_url(queue)
    kinds = {"lonely": mq.logged_in_clients(queue.lonely), "short": mq.logged_in_clients(queue.short)}
    poll_sql = {}
    for kind, clients in kinds.items():
        for number, client in enumerate(clients):
            check_poll(mq.poll(client, url), f"{kind} poller {number}")
        poll_sql[kind] = mq.statements_of(lambda client=clients[0], kind=kind: check_poll(mq.poll(client, url), kind))
        postgres = mq.tree_cpu(postmaster)
        seconds, times, python = mq.client_polls(clients, url, args.polls)
        postgres = mq.tree_cpu(postmaster) - postgres if postmaster else None
        ms = 1000 / args.polls
        cpu.append(mq.Cpu(f"test client, {kind}", args.polls, python * ms, postgres * ms if postmaster else None))
        rate = args.polls / seconds
        median, p99 = 1000 * statistics.median(times), 1000 * mq.percentile(times, 0.99)
        label = f"polls, test client, {kind} pollers ({len(clients)} users)"
        # One process polling in turn, for comparison: the target is for polls through gunicorn and wrk.
        rows.append(mq.Row(label, args.polls, median, p99, rate, mq.tally(poll_sql[kind]), "", "read"))
        log, calls = QueryLog(), 4 * args.sample
        mq.client_polls(clients, url, calls, log)
        details.append(lambda kind=kind, log=log, calls=calls: mq.print_shapes(f"poll, {kind} poller", log, calls))
    still_waiting(queue, args.waiting, "the test-client polls")

    # Polls through gunicorn + wrk.
    if args.workers:
        cookies = {kind: mq.cookies_of(clients, url) for kind, clients in kinds.items()}
        for workers in args.workers:
            with mq.gunicorn(workers) as (port, server):
                for kind in kinds:
                    server_check(port, url, cookies[kind][0])
                    connections = args.connections or max(4, 2 * workers)
                    before = (
                        mq.tree_cpu(server),
                        mq.tree_cpu(postmaster),
                        resource.getrusage(resource.RUSAGE_CHILDREN),
                    )
                    result = mq.wrk(port, url, cookies[kind], seconds=args.seconds, connections=connections, threads=2)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    ms = 1000 / max(result.requests, 1)
                    cpu.append(
                        mq.Cpu(
                            f"gunicorn {workers} workers, {kind}",
                            result.requests,
                            (mq.tree_cpu(server) - before[0]) * ms,
                            (mq.tree_cpu(postmaster) - before[1]) * ms if postmaster else None,
                            (after.ru_utime + after.ru_stime - before[2].ru_utime - before[2].ru_stime) * ms,
                        )
                    )
                    if result.bad or result.errors:
                        raise SystemExit(f"error: wrk: {result.bad} answers not 200, {result.errors} socket errors")
                    rate = result.requests / result.seconds
                    label = f"polls, gunicorn {workers} workers, wrk -c {connections}, {kind}"
                    target = mq.verdict_rate(rate, TARGET_POLLS_PER_SECOND)
                    queries = f"{mq.tally(poll_sql[kind])}+1"
                    rows.append(
                        mq.Row(label, result.requests, result.p50_ms, result.p99_ms, rate, queries, target, "read")
                    )
        still_waiting(queue, args.waiting, "the gunicorn polls")

    _pg.log("references: pgbench simple-update (joins), SELECT 1 round trips (polls), on the same PostgreSQL")
    references = {
        "write": _reference.pgbench_simple_update(database_url),
        "read": _reference.select_one(database_url),
    }
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"{_pg.versions()}, {os.cpu_count()} CPUs, load average at the end {load}\n"
        f"ladder {queue.ladder.slug} ({queue.ladder.queue_formats}): {args.waiting:,} waiting ="
        f" {queue.crowd:,} crowd (uniform {CROWD_LOW:g}–{CROWD_HIGH:g}, RD {RD_LOW:g}–{RD_HIGH:g},"
        f" {queue.parties:,} parties of two) + {args.lonely} lonely + {args.short} short pollers"
        f" + {args.short * sum(SHORT_BY.values()):,} in the short pollers' clusters"
    )
    print(f"write {references['write'].line()}\nread  {references['read'].line()}")
    mq.print_rows(rows, references)
    print(
        "queries: SQL statements + BEGIN/COMMIT/SAVEPOINT (CaptureQueriesContext, one call);"
        " through a server +1: the per-request SELECT 1 health check (conn_health_checks)\n"
        "× ref: per second (1,000 ÷ median ms for single calls) ÷ the reference: write for the joins,"
        " read for the polls"
    )
    mq.print_cpu(cpu)
    for detail in details:
        detail()
    for code in ("2v2", "4v4", "ffa4", "teams4"):
        join_phases(queue, joiners, code, args.sample)
    if args.profile:
        mq.profile(f"{args.profile} joins", lambda: run_joins(queue, joiners, args.profile), top=40)
    still_waiting(queue, args.waiting, "the end")


if __name__ == "__main__":
    main()
