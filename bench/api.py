"""The API through a real server: leaderboard reads and confirmed reports per second.

Builds a ladder of ``--players`` members (100,000 by default, written with bulk inserts),
starts gunicorn (``--workers`` sync workers, production settings, throttles off) on
loopback against PostgreSQL, and loads it from ``--clients`` threads with keep-alive
sessions for ``--seconds`` each:

1. ``GET /api/v1/ladders/<slug>/leaderboard/?page=N`` over the first 20 pages;
2. ``POST /api/v1/matches/`` by a trusted reporter (a game server), 1 v 1 between random
   members, each confirmed and rated at once (every answer must be 201).

Prints requests per second and the p50/p99 latency of each, next to the targets.
Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py), and
``CACHE_URL`` (Redis) if set, else a throwaway ``redis-server``: as in production, the
workers share one cache, so a leaderboard page is computed once for all of them (the
bench's own leaderboard keys are cleared first).
Run: ``.venv/bin/python bench/api.py [--players 100000] [--workers 4] [--clients 16]``.

Targets (2-core machine): ≥ 500 leaderboard reads/s; ≥ 200 reports/s with p99 < 200 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pg

ROOT = Path(__file__).resolve().parent.parent


def build(players: int) -> tuple[str, str, list[str]]:
    """The ladder, a trusted reporter's token, and the members' usernames."""
    from django.contrib.auth.hashers import make_password
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
        PlayerRating.objects.bulk_create(
            PlayerRating(
                player=user,
                ladder=ladder,
                rating=rng.gauss(1500, 200),
                rd=rng.uniform(40, 350),
                volatility=0.06,
                rd_as_of=now - timedelta(days=rng.uniform(0, 60)),
                games=rng.randint(0, 50),
                joined_at=joined,
            )
            for user in users
        )
    server = User.objects.create(username="gameserver", is_bot=True, password=password)
    ladder.trusted_reporters.add(server)
    _, secret = token_create(user=server, name="bench")
    return ladder.slug, secret, names


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


def clear_leaderboard_pages(url: str) -> None:
    """Drop cached leaderboard pages: a fresh database reuses ladder ids, so old pages would match."""
    import redis

    client = redis.Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    for key in client.scan_iter(match="*api:leaderboard:*"):
        client.delete(key)


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
        rng = random.Random(number)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--only", choices=["reads", "reports"], help="Run one of the two loads only")
    args = parser.parse_args()

    with _pg.database() as url, redis_url() as cache_url:
        clear_leaderboard_pages(cache_url)
        _pg.setup_django(url)
        slug, secret, names = build(args.players)
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
            "API_THROTTLE_ANON": "",
            "API_THROTTLE_TOKEN": "",
            "API_THROTTLE_USER": "",
            "LOG_LEVEL": "WARNING",
        }
        gunicorn = [str(Path(sys.executable).with_name("gunicorn")), "ladder.wsgi", "--bind", f"127.0.0.1:{port}"]
        gunicorn += ["--workers", str(args.workers), "--log-level", "warning"]
        server = subprocess.Popen(gunicorn, cwd=ROOT, env=env)
        base = f"http://127.0.0.1:{port}/api/v1"
        try:
            import requests

            for _ in range(100):
                try:
                    requests.get(f"{base}/ladders/", timeout=2)
                    break
                except requests.ConnectionError:
                    time.sleep(0.1)
            reads, read_ms, read_status = 0, [], {}
            reports, report_ms, report_status = 0, [], {}

            def read(session, rng) -> int:
                page = rng.randint(1, 20)
                return session.get(f"{base}/ladders/{slug}/leaderboard/", params={"page": page}, timeout=60).status_code

            if args.only != "reports":
                _pg.log("warming the leaderboard pages")
                for page in range(1, 21):
                    assert requests.get(f"{base}/ladders/{slug}/leaderboard/", params={"page": page}, timeout=60).ok
                _pg.log(f"leaderboard reads for {args.seconds:g} s from {args.clients} clients")
                reads, read_ms, read_status = load(base, read, args.clients, args.seconds)

            headers = {"Authorization": f"Bearer {secret}"}

            def report(session, rng) -> int:
                a, b = rng.sample(names, 2)
                body = {"ladder": slug, "sides": [{"players": [a], "placement": 1}, {"players": [b], "placement": 2}]}
                return session.post(f"{base}/matches/", json=body, headers=headers, timeout=60).status_code

            if args.only != "reads":
                _pg.log(f"trusted reports for {args.seconds:g} s from {args.clients} clients")
                reports, report_ms, report_status = load(base, report, args.clients, args.seconds)
        finally:
            server.terminate()
            server.wait(timeout=30)

    print(f"\nAPI through gunicorn ({args.workers} workers), {args.players:,} players, {args.clients} clients")
    print(f"  {'operation':<40} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8}  {'target':<26} statuses")
    rows = [
        ("leaderboard page (cached 5 s)", reads, read_ms, read_status, "≥ 500/s", reads >= 500),
        (
            "trusted report, confirmed and rated",
            reports,
            report_ms,
            report_status,
            "≥ 200/s, p99 < 200 ms",
            reports >= 200 and percentile(report_ms, 0.99) < 200,
        ),
    ]
    for label, rate, ms, statuses, target, met in rows:
        print(
            f"  {label:<40} {rate:>7} {percentile(ms, 0.5):>8.1f} {percentile(ms, 0.99):>8.1f}  "
            f"{target + (' met' if met else ' missed'):<26} {dict(sorted(statuses.items()))}"
        )


if __name__ == "__main__":
    main()
