"""The HTML ladder page through a real server: plain leaderboard pages per second, and the login page meanwhile.

Builds a ladder of ``--players`` members (100,000 by default; users and ratings by COPY,
some ranked, some provisional, idle or new, and a nightly snapshot so the page shows rank
changes), starts gunicorn (``--workers`` sync workers, production settings) on loopback
against PostgreSQL and Redis, and measures with ``wrk``, after a short warm-up that is not
counted:

1. ``GET /ladders/<slug>/?page=N`` over the first 20 pages from ``--clients`` anonymous
   connections for ``--seconds``;
2. ``GET /accounts/login/`` from one connection while 4 others load ladder pages (the
   issue's probe: four anonymous clients on a big ladder slowed every page of the site).

The machine's reference comes from the same run, once the server has stopped: ``SELECT 1``
round trips through psycopg on the same PostgreSQL, one connection, per second
(bench/_reference.py). Each page figure is printed next to its target and as a ratio to
that reference, so runs on other machines compare; the CPU time the gunicorn workers,
PostgreSQL and Redis spent per ladder page is printed too, which other work on a busy
machine hardly changes.

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py), and
``CACHE_URL`` (Redis) if set, else a throwaway ``redis-server`` (bench/api.py's); the
bench's leaderboard keys are cleared first. Needs ``wrk`` (``apt-get install wrk``).
Run: ``.venv/bin/python bench/ladder_page.py [--players 100000] [--workers 4] [--clients 16]``.

Targets (2-core machine): HTML ladder page ≥ 300/s on 100,000 members; the login page's
p99 < 200 ms while 4 clients load ladder pages.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cpu
import _pg
import _reference
import replay

ROOT = Path(__file__).resolve().parent.parent
TARGET_PAGES = 300  # ladder pages a second
TARGET_LOGIN_P99 = 200.0  # ms, while 4 clients load ladder pages
PAGES = 20


def _api_bench():
    """bench/api.py (for its throwaway Redis), loaded by path: as ``api`` it would shadow the project's app."""
    spec = importlib.util.spec_from_file_location("bench_api", Path(__file__).with_name("api.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(players: int, seed: int) -> str:
    """A ladder of ``players`` members by COPY, and last midnight's snapshot; returns its slug."""
    from django.db import connection
    from django.utils import timezone

    from accounts.models import User
    from ladder.models import Ladder
    from ladder.standings.nightly import leaderboard_snapshot, local_midnight
    from ratings.models import PlayerRating

    started = time.perf_counter()
    now = timezone.now()
    ladder = Ladder.objects.create(name="Page bench", slug="page-bench", game="Benchmark")
    connection.ensure_connection()
    pg = connection.connection
    progress = replay.Progress(started)
    user0 = replay.next_id(pg, User)
    replay.copy_rows(
        pg,
        User,
        ["id", "username", "password", "is_bot"],
        ((user0 + n, f"p{n:06d}", "!", n % 50 == 0) for n in range(players)),
        players,
        progress,
        now,
    )
    rng = random.Random(seed)
    joined = now - timedelta(days=365)

    def ratings():
        for n in range(players):
            # As a season leaves a ladder: most ranked, others provisional, with too few games, idle or new.
            games = rng.randint(0, 50)
            wins = rng.randint(0, games)
            last = now - timedelta(days=rng.uniform(0, 60))
            rd = rng.uniform(40, 120) if games > 5 else rng.uniform(120, 350) if games else 350.0
            yield (
                rating0 + n, user0 + n, ladder.pk, rng.gauss(1500, 200), rd, 0.06, last if games else joined,
                games, wins, games - wins, 0, last if games else None, joined, True,
            )  # fmt: skip

    rating0 = replay.next_id(pg, PlayerRating)
    columns = ["id", "player_id", "ladder_id", "rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses"]
    columns += ["draws", "last_played_at", "joined_at", "is_active"]
    replay.copy_rows(pg, PlayerRating, columns, ratings(), players, progress, now)
    for model in (User, PlayerRating):
        replay.sync_sequence(pg, model)
        pg.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    leaderboard_snapshot(ladder=ladder, midnight=local_midnight(ladder=ladder, at=now))
    _pg.log(f"build: {players:,} members and a snapshot in {time.perf_counter() - started:.1f} s")
    return ladder.slug


WRK_PAGES = """
request = function()
  return wrk.format("GET", "/ladders/%(slug)s/?page=" .. math.random(1, %(pages)d))
end
"""

WRK_LOGIN = """
request = function()
  return wrk.format("GET", "/accounts/login/")
end
"""


def wrk(url: str, script: str, clients: int, seconds: float) -> tuple[float, float, float, dict[str, int]]:
    """Answers per second, p50 and p99 in ms, and the count of each status (and of timeouts), by ``wrk``.

    A request is given 60 s before it counts as a timeout (wrk's default is 2 s), so slow
    pages are measured rather than dropped.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as file:
        file.write(_api_bench().WRK_COMMON + script)  # bench/api.py's counting script
        file.flush()
        threads = min(2, clients)
        duration = _api_bench().wrk_duration(seconds)
        command = ["wrk", f"-t{threads}", f"-c{clients}", f"-d{duration}", "--timeout", "60s", "--latency"]
        output = subprocess.run([*command, "-s", file.name, url], capture_output=True, text=True, check=True).stdout
    line = next(line for line in output.splitlines() if line.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    statuses = dict(result["statuses"])
    if result["timeouts"]:
        statuses["timeout"] = result["timeouts"]
    return result["requests"] / result["seconds"], result["p50"], result["p99"], statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=3.0, help="Seconds of load before each measurement")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--pages",
        type=int,
        default=PAGES,
        help="Ladder pages loaded (fewer: more of the requests find their page cached)",
    )
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("error: wrk is not installed (apt-get install wrk)")
    bench_api = _api_bench()

    # Production settings serve the collected, hashed static files: collect them where nothing else looks.
    static_root = tempfile.mkdtemp(prefix="ladder-bench-static.")
    os.environ["STATIC_ROOT"] = static_root
    with _pg.database() as url, bench_api.redis_url() as cache_url:
        _pg.setup_django(url)
        from django.core.management import call_command

        call_command("collectstatic", interactive=False, verbosity=0)
        clear_leaderboard_keys(bench_api, cache_url)
        slug = build(args.players, args.seed)
        postmaster = _cpu.postmaster_pid()
        from django.db import connections

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
            "LOG_LEVEL": "WARNING",
            "STATIC_ROOT": static_root,
        }
        gunicorn = [str(Path(sys.executable).with_name("gunicorn")), "config.wsgi", "--bind", f"127.0.0.1:{port}"]
        gunicorn += ["--workers", str(args.workers), "--log-level", "warning", "--timeout", "120"]
        gunicorn += ["--access-logfile", "/dev/null"]  # gunicorn.conf.py logs each request to stdout
        server = subprocess.Popen(gunicorn, cwd=ROOT, env=env)
        base = f"http://127.0.0.1:{port}"
        fill = {"slug": slug, "pages": args.pages}
        try:
            bench_api.wait_for_server(f"{base}/accounts/login/", server)
            _pg.log("first requests of each ladder page")
            for page in range(1, args.pages + 1):
                bench_api.get_ok(f"{base}/ladders/{slug}/", params={"page": page}, timeout=120)
            _pg.log(f"ladder pages for {args.seconds:g} s over {args.clients} connections")
            if args.warmup:
                wrk(base, WRK_PAGES % fill, args.clients, args.warmup)
            before = _cpu.server_cpu_seconds(server.pid, postmaster, cache_url)
            pages = wrk(base, WRK_PAGES % fill, args.clients, args.seconds)
            after = _cpu.server_cpu_seconds(server.pid, postmaster, cache_url)
            served = max(pages[0] * args.seconds, 1)
            page_cpu_ms = {name: 1000 * (after[name] - before[name]) / served for name in before}
            _pg.log(f"the login page for {args.seconds:g} s while 4 connections load ladder pages")
            login = login_under_load(base, fill, args.seconds)
        finally:
            server.terminate()
            server.wait(timeout=30)
            shutil.rmtree(static_root, ignore_errors=True)
        _pg.log("reference: SELECT 1 round trips through psycopg")
        reference = _reference.select_one(url)

    print(
        f"\nHTML ladder page through gunicorn ({args.workers} workers), {args.players:,} members, wrk; "
        f"{reference.line()}"
    )
    print(f"  {'operation':<46} {'req/s':>7} {'× ref':>7} {'p50 ms':>8} {'p99 ms':>8}  {'target':<24} statuses")
    rate, p50, p99, statuses = pages
    met = rate >= TARGET_PAGES and set(statuses) == {"200"}
    print(
        f"  {f'ladder page ?page=1..{args.pages}, {args.clients} connections':<46} {rate:>7,.1f} "
        f"{reference.ratio(rate):>7} "
        f"{p50:>8.1f} {p99:>8.1f}  {f'≥ {TARGET_PAGES}/s' + (' met' if met else ' missed'):<24} "
        f"{dict(sorted(statuses.items()))}"
    )
    (rate, p50, p99, statuses), (loaded_rate, loaded_statuses) = login
    met = p99 < TARGET_LOGIN_P99 and set(statuses) == {"200"}
    print(
        f"  {'login page, 1 connection':<46} {rate:>7,.1f} {reference.ratio(rate):>7} {p50:>8.1f} {p99:>8.1f}  "
        f"{f'p99 < {TARGET_LOGIN_P99:.0f} ms' + (' met' if met else ' missed'):<24} {dict(sorted(statuses.items()))}"
    )
    print(
        f"  {'  meanwhile: ladder pages, 4 connections':<46} {loaded_rate:>7,.1f} {reference.ratio(loaded_rate):>7} "
        f"{'':>8} {'':>8}  {'':<24} {dict(sorted(loaded_statuses.items()))}"
    )
    load = os.getloadavg()[0]
    spent = ", ".join(f"{name} {ms:.1f}" for name, ms in page_cpu_ms.items())
    print(
        f"  CPU per ladder page, ms: {spent} (hardly changed by other work on the machine; "
        f"load average at the end {load:.1f} on {os.cpu_count()} cores)"
    )


def login_under_load(base: str, fill: dict, seconds: float):
    """The login page's figures from one connection while 4 connections load ladder pages (two ``wrk``s at once)."""
    loaded: dict[str, tuple] = {}

    def pages() -> None:
        # A little longer than the login run, so the ladder load covers all of it.
        rate, _, _, statuses = wrk(base, WRK_PAGES % fill, 4, seconds + 2)
        loaded["pages"] = (rate, statuses)

    thread = threading.Thread(target=pages)
    thread.start()
    time.sleep(1.0)
    login = wrk(base, WRK_LOGIN, 1, seconds)
    thread.join()
    return login, loaded["pages"]


def clear_leaderboard_keys(bench_api, url: str) -> None:
    """Drop cached rankings and pages: a fresh database reuses ladder ids and slugs, so old ones would match."""
    client = bench_api.wait_for_redis(url)
    for key in client.scan_iter(match="*leaderboard:*"):
        client.delete(key)


if __name__ == "__main__":
    main()
