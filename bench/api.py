"""The API through a real server: leaderboard reads and confirmed reports per second.

Builds a ladder of ``--players`` members (100,000 by default, written with bulk inserts)
and ``--matches`` past matches between them (100,000),
starts gunicorn (``--workers`` sync workers, production settings, throttles off) on
loopback against PostgreSQL, and loads it from ``--clients`` concurrent connections for
``--seconds`` each, after a short warm-up that is not counted:

1. ``GET /api/v1/ladders/<slug>/leaderboard/?page=N`` over the first 20 pages;
2. ``POST /api/v1/matches/`` by a trusted reporter (a game server), 1 v 1 between random
   members, each confirmed and rated at once (every answer must be 201); then the same
   with a new ``Idempotency-Key`` on each, as the README asks bots to send.

Prints requests per second and the p50/p99 latency of each, next to the targets, the CPU
time the gunicorn workers, PostgreSQL (all its processes, and of those its connections'
backends) and Redis spent per request (bench/_cpu.py: a rate moves with other work on a
shared machine, this moves less), PostgreSQL's against its target, and
this machine's references measured in the same run on the same PostgreSQL once the server
has stopped (bench/_reference.py): ``SELECT 1`` round trips a second for the reads,
pgbench's simple-update transactions a second for the reports; each rate is also printed
as a ratio to its reference ("× ref"), so runs on other machines compare.

The load generator is ``wrk`` (Debian's ``wrk``; two threads, a Lua script picks the page or
the two players of each request and counts the answers' statuses) when it is installed,
else (or with ``--load python``) threads of ``requests`` sessions. The server shares the
machine's two cores with the load generator; ``wrk`` needs a fraction of the CPU the
Python one does, so its figures are closer to what the server can serve.
Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py), and
``CACHE_URL`` (Redis) if set, else a throwaway ``redis-server``: as in production, the
workers share one cache, so a leaderboard page is computed once for all of them (the
bench's own leaderboard keys are cleared first).
Run: ``.venv/bin/python bench/api.py [--players 100000] [--workers 4] [--clients 16] [--load wrk|python]``.

Targets (2-core machine): ≥ 500 leaderboard reads/s; ≥ 200 reports/s with p99 < 200 ms; at most
2 ms of PostgreSQL's CPU a report, 2.5 ms with an ``Idempotency-Key``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cpu
import _pg
import _reference

ROOT = Path(__file__).resolve().parent.parent


# The primary's CPU a report (all its processes), the ceiling of the whole site: docs/operations.md, "Scaling".
POSTGRES_TARGET_MS = {"reports": 2.0, "keyed": 2.5}


def build(players: int, matches: int) -> tuple[str, str, list[str]]:
    """The ladder with ``matches`` past matches, a trusted reporter's token, and the members' usernames."""
    from django.contrib.auth.hashers import make_password
    from django.db import connection
    from django.utils import timezone

    from accounts.models import User
    from api.services import token_create
    from ladder.models import Ladder
    from ratings.models import PlayerRating

    ladder = Ladder.objects.create(name="Bench", slug="bench", game="Bench", rematch_cooldown_minutes=0)
    now = timezone.now()
    joined = now - timedelta(days=365)
    password = make_password(None)
    rng = random.Random(7)
    names = [f"p{i:06d}" for i in range(players)]
    _pg.log(f"creating {players:,} members")
    for start in range(0, players, 10_000):
        chunk = names[start : start + 10_000]
        users = User.objects.bulk_create(User(username=name, password=password) for name in chunk)
        PlayerRating.objects.bulk_create(member(user, ladder, rng, now, joined) for user in users)
    server = User.objects.create(username="gameserver", is_bot=True, password=password)
    ladder.trusted_reporters.add(server)
    _, secret = token_create(user=server, name="bench")
    _pg.log(f"recording {matches:,} past matches")
    with connection.cursor() as cursor:
        params = {"ladder": ladder.pk, "reporter": server.pk, "matches": matches, "now": now, "engine": ladder.engine}
        cursor.execute(PAST_MATCHES, params)
    # Statistics and visibility maps, as autovacuum keeps them on a live site: without the
    # vacuum, autovacuum would work through the freshly written history while the reports are
    # measured, and its CPU would count as theirs. (VACUUM runs outside a transaction.)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return ladder.slug, secret, names


# A live ladder of this size has a history (its matches, their sides and players, their rating
# events and history rows): without one, the planner would see empty tables and plan every
# look-up in them as a scan, as a brand-new site does until autovacuum analyzes them (within
# a minute).
PAST_MATCHES = """
    CREATE TEMPORARY TABLE bench_pairs ON COMMIT DROP AS
    WITH players AS (
        SELECT player_id, row_number() OVER (ORDER BY player_id) - 1 AS i, count(*) OVER () AS n
        FROM ratings_playerrating WHERE ladder_id = %(ladder)s
    ), picks AS (
        SELECT g, floor(random() * p.n)::bigint AS a, floor(random() * (p.n - 1))::bigint AS b, p.n
        FROM generate_series(1, %(matches)s) AS g, (SELECT max(n) AS n FROM players) AS p
    )
    SELECT picks.g, pa.player_id AS a, pb.player_id AS b,
        %(now)s::timestamptz - (picks.g * interval '5 minutes') AS played_at
    FROM picks
    JOIN players pa ON pa.i = picks.a
    JOIN players pb ON pb.i = CASE WHEN picks.b >= picks.a THEN picks.b + 1 ELSE picks.b END;
    ALTER TABLE bench_pairs ADD COLUMN match_id bigint;
    WITH new AS (
        INSERT INTO ladder_match (ladder_id, status, played_at, reported_by_id, reported_at, confirmed_at,
                                  confirmation, rated_at, moderator_note, created_at)
        SELECT %(ladder)s, 'confirmed', played_at, %(reporter)s, played_at, played_at, 'trusted', played_at, '',
            played_at
        FROM bench_pairs ORDER BY g
        RETURNING id, played_at
    )
    UPDATE bench_pairs SET match_id = new.id FROM new WHERE new.played_at = bench_pairs.played_at;
    INSERT INTO ladder_matchside (match_id, index, placement, answer, dispute_reason)
    SELECT match_id, side, side + 1, '', '' FROM bench_pairs, (VALUES (0), (1)) AS s(side);
    INSERT INTO ladder_participant (match_id, side_id, player_id)
    SELECT p.match_id, s.id, CASE s.index WHEN 0 THEN p.a ELSE p.b END
    FROM bench_pairs p JOIN ladder_matchside s ON s.match_id = p.match_id;
    WITH events AS (
        INSERT INTO ratings_ratingevent (ladder_id, kind, match_id, is_active, at, created_at)
        SELECT %(ladder)s, 'match', match_id, true, played_at, played_at FROM bench_pairs ORDER BY g
        RETURNING id, match_id, at
    )
    INSERT INTO ratings_ratingchange (event_id, ladder_id, match_id, kind, engine, engine_params, created_at,
        player_id, rating_before, rd_before, volatility_before, rd_as_of_before, rd_at_event, rating_after,
        rd_after, volatility_after, rd_as_of_after, expected, score, delta)
    SELECT e.id, %(ladder)s, e.match_id, 'match', %(engine)s, '{}'::jsonb, e.at, x.player,
        1500, 120, 0.06, e.at, 120, 1500 + x.delta, 118, 0.06, e.at, 0.5, x.score, x.delta
    FROM events e JOIN bench_pairs p ON p.match_id = e.match_id,
        LATERAL (VALUES (p.a, 1.0, 8.0), (p.b, 0.0, -8.0)) AS x(player, score, delta);
"""


def member(user, ladder, rng: random.Random, now, joined):
    """A rating as a season leaves it: some players ranked, others provisional, idle or new."""
    from ratings.models import PlayerRating

    games = rng.randint(0, 50)
    wins = rng.randint(0, games)
    draws = rng.randint(0, games - wins)
    last_game = now - timedelta(days=rng.uniform(0, 60))
    return PlayerRating(
        player=user,
        ladder=ladder,
        rating=rng.gauss(1500, 200),
        rd=rng.uniform(40, 350) if games else 350.0,
        volatility=0.06,
        rd_as_of=last_game if games else joined,
        games=games,
        wins=wins,
        losses=games - wins - draws,
        draws=draws,
        last_played_at=last_game if games else None,
        joined_at=joined,
    )


@contextmanager
def redis_url() -> Iterator[str]:
    """``CACHE_URL`` if set, else a throwaway ``redis-server`` on a free loopback port (no persistence)."""
    url = os.environ.get("CACHE_URL", "")
    if url:
        _pg.log("using the Redis of CACHE_URL")
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("error: no CACHE_URL and no redis-server (apt-get install redis-server)")
    port = _pg.free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=30)


def wait_for_redis(url: str, seconds: float = 30.0):
    """A client of the Redis at ``url`` once it answers: a throwaway ``redis-server`` takes a moment to start.

    Any failure (refused, reset, timed out, still loading) is retried until the deadline;
    then the benchmark stops with one line.
    """
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
    deadline = time.monotonic() + seconds
    while True:
        try:
            client.ping()
            return client
        except redis.RedisError as error:
            if time.monotonic() > deadline:
                raise SystemExit(
                    f"error: Redis at {url} did not answer within {seconds:g} s (last: {type(error).__name__})"
                ) from None
            time.sleep(0.1)


def clear_leaderboard_pages(url: str) -> None:
    """Drop cached leaderboard pages: a fresh database reuses ladder ids, so old pages would match."""
    client = wait_for_redis(url)
    for key in client.scan_iter(match="*api:leaderboard:*"):
        client.delete(key)


def wait_for_server(url: str, server: subprocess.Popen, seconds: float = 120.0) -> None:
    """Wait until ``url`` answers 2xx: on a busy machine gunicorn's first answer can take many seconds.

    Any failure (refused, reset, timed out, an error status) is retried until the deadline;
    then, or if gunicorn exits, the benchmark stops with one line.
    """
    import requests

    deadline = time.monotonic() + seconds
    last = "no answer"
    while True:
        if server.poll() is not None:
            raise SystemExit(f"error: gunicorn exited (status {server.returncode}) before answering {url}")
        try:
            answer = requests.get(url, timeout=max(1.0, min(10.0, deadline - time.monotonic())))
            if answer.ok:
                return
            last = f"HTTP {answer.status_code}"
        except requests.RequestException as error:
            last = type(error).__name__
        if time.monotonic() > deadline:
            raise SystemExit(f"error: gunicorn did not answer {url} within {seconds:g} s (last: {last})")
        time.sleep(0.2)


def get_ok(url: str, *, params: dict | None = None, timeout: float = 120.0) -> None:
    """One GET that must answer 2xx, such as a page's first, uncached answer, which can take
    many seconds on a big ladder; a failure or an error status stops the benchmark with one line."""
    import requests

    try:
        answer = requests.get(url, params=params, timeout=timeout)
    except requests.RequestException as error:
        raise SystemExit(
            f"error: GET {url} {params or ''} failed: {type(error).__name__} (timeout {timeout:g} s)"
        ) from None
    if not answer.ok:
        raise SystemExit(f"error: GET {url} {params or ''} answered HTTP {answer.status_code}")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def load(base: str, make_request, clients: int, seconds: float) -> tuple[int, list[float], dict[int, int]]:
    """``make_request(session, rng)`` from ``clients`` threads for ``seconds``; latencies in ms."""
    import requests

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker(number: int) -> None:
        session = requests.Session()
        rng = random.Random(f"{time.time()}-{number}")  # new pairs in each run, not the warm-up's again
        mine: list[float] = []
        counts: dict[int, int] = {}
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            status = make_request(session, rng)
            mine.append((time.perf_counter() - started) * 1000)
            counts[status] = counts.get(status, 0) + 1
        with lock:
            latencies.extend(mine)
            for status, count in counts.items():
                statuses[status] = statuses.get(status, 0) + count

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    return round(len(latencies) / elapsed), latencies, statuses


WRK_COMMON = """
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end
init = function(args)
  math.randomseed(os.time() * 1000 + id * 7919)
  statuses = {}
end
response = function(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
done = function(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      total[tostring(status)] = (total[tostring(status)] or 0) + count
    end
  end
  local parts = {}
  for status, count in pairs(total) do table.insert(parts, string.format('"%s": %d', status, count)) end
  io.write(string.format(
    '\\nRESULT {"requests": %d, "seconds": %f, "p50": %f, "p99": %f, "timeouts": %d, "statuses": {%s}}\\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.timeout, table.concat(parts, ", ")))
end
threads = {}
"""

WRK_READ = """
request = function()
  return wrk.format("GET", "/api/v1/ladders/%(slug)s/leaderboard/?page=" .. math.random(1, 20))
end
"""

WRK_REPORT = """
local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer %(secret)s"}
local keyed, sent, run = %(keyed)s, 0, math.random(1, 1000000000)
request = function()
  if keyed then
    sent = sent + 1
    headers["Idempotency-Key"] = string.format("%%d-%%d-%%d-%%d", os.time(), run, id, sent)
  end
  local a = math.random(0, %(players)d - 1)
  local b = math.random(0, %(players)d - 2)
  if b >= a then b = b + 1 end
  local body = string.format(
    '{"ladder":"%(slug)s","sides":[{"players":["p%%06d"],"placement":1},{"players":["p%%06d"],"placement":2}]}', a, b)
  return wrk.format("POST", "/api/v1/matches/", headers, body)
end
"""


def wrk_duration(seconds: float) -> str:
    """``seconds`` as ``wrk -d`` takes it: whole seconds, at least one (it refuses ``0.2s``).

    Rates are worked out from the time the Lua script measured, not from this duration.
    """
    return f"{max(1, math.ceil(seconds))}s"


def wrk(url: str, script: str, clients: int, seconds: float) -> tuple[int, float, float, dict[int, int]]:
    """Requests per second, p50 and p99 in ms, and the count of each status, measured by ``wrk``."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as file:
        file.write(WRK_COMMON + script)
        file.flush()
        command = ["wrk", "-t2", f"-c{clients}", f"-d{wrk_duration(seconds)}", "--latency", "-s", file.name, url]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    line = next(line for line in output.splitlines() if line.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    statuses = {int(status): count for status, count in result["statuses"].items()}
    return round(result["requests"] / result["seconds"]), result["p50"], result["p99"], statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--matches", type=int, default=100_000, help="Past matches in the ladder")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--only", choices=["reads", "reports"], help="Run one of the two loads only")
    parser.add_argument("--load", choices=["wrk", "python"], help="The load generator (default: wrk if installed)")
    parser.add_argument("--warmup", type=float, default=3.0, help="Seconds of load before each measurement")
    args = parser.parse_args()
    if args.load is None:
        args.load = "wrk" if shutil.which("wrk") else "python"
        if args.load == "python":
            _pg.log("wrk is not installed (apt-get install wrk): using the Python load generator")
    elif args.load == "wrk" and not shutil.which("wrk"):
        raise SystemExit("error: wrk is not installed (apt-get install wrk)")

    with _pg.database() as url, redis_url() as cache_url:
        clear_leaderboard_pages(cache_url)
        _pg.setup_django(url)
        slug, secret, names = build(args.players, args.matches)
        from django.db import connections

        postmaster = _cpu.postmaster_pid()
        connections.close_all()
        port = _pg.free_port()
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "CACHE_URL": cache_url,
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-" + "x" * 50,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "API_THROTTLE_ANON": "",
            "API_THROTTLE_TOKEN": "",
            "API_THROTTLE_USER": "",
            "LOG_LEVEL": "WARNING",
        }
        gunicorn = [str(Path(sys.executable).with_name("gunicorn")), "config.wsgi", "--bind", f"127.0.0.1:{port}"]
        gunicorn += ["--workers", str(args.workers), "--log-level", "warning"]
        gunicorn += ["--access-logfile", "/dev/null"]  # gunicorn.conf.py logs each request to stdout
        server = subprocess.Popen(gunicorn, cwd=ROOT, env=env)
        base = f"http://127.0.0.1:{port}/api/v1"
        try:
            wait_for_server(f"{base}/ladders/", server)
            results: dict[str, tuple[int, float, float, dict[int, int]]] = {}
            cpu_ms: dict[str, dict[str, float]] = {}
            headers = {"Authorization": f"Bearer {secret}"}

            def read(session, rng) -> int:
                page = rng.randint(1, 20)
                return session.get(f"{base}/ladders/{slug}/leaderboard/", params={"page": page}, timeout=60).status_code

            def report(session, rng, keyed: bool = False) -> int:
                a, b = rng.sample(names, 2)
                body = {"ladder": slug, "sides": [{"players": [a], "placement": 1}, {"players": [b], "placement": 2}]}
                sent = {**headers, "Idempotency-Key": uuid.uuid4().hex} if keyed else headers
                return session.post(f"{base}/matches/", json=body, headers=sent, timeout=60).status_code

            def keyed_report(session, rng) -> int:
                return report(session, rng, keyed=True)

            def measure(name: str, script: str, make_request, *, keyed: bool = False) -> None:
                if args.load == "wrk":
                    fill = {"slug": slug, "secret": secret, "players": len(names), "keyed": str(keyed).lower()}
                    url = f"http://127.0.0.1:{port}"
                    if args.warmup:
                        wrk(url, script % fill, args.clients, args.warmup)
                    before = _cpu.server_cpu_seconds(server.pid, postmaster, cache_url)
                    results[name] = wrk(url, script % fill, args.clients, args.seconds)
                else:
                    if args.warmup:
                        load(base, make_request, args.clients, args.warmup)
                    before = _cpu.server_cpu_seconds(server.pid, postmaster, cache_url)
                    rate, latencies, statuses = load(base, make_request, args.clients, args.seconds)
                    results[name] = (rate, percentile(latencies, 0.5), percentile(latencies, 0.99), statuses)
                after = _cpu.server_cpu_seconds(server.pid, postmaster, cache_url)
                served = max(results[name][0] * args.seconds, 1)
                cpu_ms[name] = {part: 1000 * (after[part] - before[part]) / served for part in before}

            if args.only != "reports":
                _pg.log("warming the leaderboard pages")
                for page in range(1, 21):
                    get_ok(f"{base}/ladders/{slug}/leaderboard/", params={"page": page}, timeout=60)
                _pg.log(f"leaderboard reads for {args.seconds:g} s over {args.clients} connections ({args.load})")
                measure("reads", WRK_READ, read)
            if args.only != "reads":
                _pg.log(f"trusted reports for {args.seconds:g} s over {args.clients} connections ({args.load})")
                measure("reports", WRK_REPORT, report)
                _pg.log(f"the same with an Idempotency-Key each, for {args.seconds:g} s")
                measure("keyed", WRK_REPORT, keyed_report, keyed=True)
        finally:
            server.terminate()
            server.wait(timeout=30)
        references: dict[str, _reference.Reference] = {}
        if "reads" in results:
            _pg.log("reference for reads: SELECT 1 round trips through psycopg on the same PostgreSQL")
            references["reads"] = _reference.select_one(url)
        if "reports" in results:
            _pg.log("reference for writes: pgbench simple-update on the same PostgreSQL")
            references["reports"] = references["keyed"] = _reference.pgbench_simple_update(url)

    print(
        f"\nAPI through gunicorn ({args.workers} workers), {args.players:,} players, "
        f"{args.clients} connections from {'wrk' if args.load == 'wrk' else 'Python threads'}"
    )
    for name, what in (("reads", "reads"), ("reports", "reports")):
        if name in references:
            print(f"  {what:<8} {references[name].line()}")
    print(f"  {'operation':<40} {'req/s':>7} {'× ref':>7} {'p50 ms':>8} {'p99 ms':>8}  {'target':<26} statuses")
    labels = {
        "reads": ("leaderboard page (cached 5 s)", "≥ 500/s", lambda rate, p99: rate >= 500),
        "reports": (
            "trusted report, confirmed and rated",
            "≥ 200/s, p99 < 200 ms",
            lambda rate, p99: rate >= 200 and p99 < 200,
        ),
        "keyed": (
            "  the same, with an Idempotency-Key",
            "≥ 200/s, p99 < 200 ms",
            lambda rate, p99: rate >= 200 and p99 < 200,
        ),
    }
    expected = {"reads": 200, "reports": 201, "keyed": 201}
    for name, (rate, p50, p99, statuses) in results.items():
        label, target, met = labels[name]
        verdict = " met" if met(rate, p99) and set(statuses) == {expected[name]} else " missed"
        print(
            f"  {label:<40} {rate:>7} {references[name].ratio(rate):>7} {p50:>8.1f} {p99:>8.1f}  "
            f"{target + verdict:<26} {dict(sorted(statuses.items()))}"
        )
    for name, parts in cpu_ms.items():
        spent = ", ".join(f"{part} {ms:.2f}" for part, ms in parts.items())
        print(f"  CPU per request ({labels[name][0].strip()}), ms: {spent}")
        if name in POSTGRES_TARGET_MS and "postgres" in parts:
            target = POSTGRES_TARGET_MS[name]
            verdict = "met" if parts["postgres"] <= target else "missed"
            print(f"    PostgreSQL's CPU a report {parts['postgres']:.2f} ms, target ≤ {target:g} ms: {verdict}")
    load_average = os.getloadavg()[0]
    print(
        f"  (CPU per request hardly changes with other work on the machine; load average at the end "
        f"{load_average:.1f} on {os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
