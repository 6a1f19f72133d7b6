"""This machine's reference figures, measured in the same run as a benchmark's own.

A figure alone says little on a shared or different machine, so every benchmark also
measures one of these on the same PostgreSQL, right before or after its own work, and
prints its figures as a ratio to it:

- **write paths**: pgbench's built-in *simple-update* script (``pgbench -N``: one UPDATE,
  one SELECT and one INSERT per transaction), one client, on a scale-1 pgbench database
  created next to the benchmark's own; transactions per second.
- **read paths**: ``SELECT 1`` round trips through psycopg on one connection, per second.

Both run on one core, as a web worker's request does, so the ratios compare across
machines of different core counts as well as across runs on a busy one.
``BENCH_REFERENCE_SECONDS`` shortens them (the tests' brief runs), at the cost of a noisier
reference; below one second, pgbench (whose ``-T`` takes whole seconds) runs a fixed
``BRIEF_TRANSACTIONS`` instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import _pg

PGBENCH_DATABASE = f"ladder_bench_pgbench_{os.getpid()}"  # runs at once on one server keep apart
BRIEF_TRANSACTIONS = 200


def _seconds(default: float) -> float:
    return float(os.environ.get("BENCH_REFERENCE_SECONDS") or default)


@dataclass(frozen=True)
class Reference:
    name: str  # what was measured, for the printout
    per_second: float

    def line(self) -> str:
        return f"reference: {self.name} {self.per_second:,.0f}/s"

    def ratio(self, figure: float) -> str:
        """``figure`` (per second) as a multiple of the reference, e.g. ``0.034×``."""
        return f"{figure / self.per_second:.3f}×"


def select_one(url: str, seconds: float = 2.0) -> Reference:
    """``SELECT 1`` round trips a second through psycopg on one connection (the read reference)."""
    import psycopg

    seconds = _seconds(seconds)
    with psycopg.connect(_libpq(url), autocommit=True) as conn, conn.cursor() as cursor:
        for _ in range(200):  # warm up: connection caches, CPU frequency
            cursor.execute("SELECT 1")
        count, started = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - started) < seconds:
            for _ in range(100):
                cursor.execute("SELECT 1")
                cursor.fetchone()
            count += 100
    return Reference("SELECT 1 round trips through psycopg, one connection", count / elapsed)


def pgbench_simple_update(url: str, seconds: int = 10) -> Reference:
    """pgbench's simple-update transactions a second, one client, scale 1 (the write reference)."""
    wanted = _seconds(seconds)
    if wanted >= 1:
        limit, length = ["-T", str(round(wanted))], f"{round(wanted)} s"
    else:
        limit, length = ["-t", str(BRIEF_TRANSACTIONS)], f"{BRIEF_TRANSACTIONS} transactions"
    pgbench = shutil.which("pgbench") or str(_pg.pg_bindir() / "pgbench")
    if not Path(pgbench).is_file():
        raise SystemExit("error: no pgbench, for the reference figure (apt-get install postgresql)")
    parts = urlsplit(url)
    connect = ["-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 5432), "-U", parts.username or "postgres"]
    import psycopg

    admin = _libpq(url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{PGBENCH_DATABASE}"')
        conn.execute(f'CREATE DATABASE "{PGBENCH_DATABASE}"')
    try:
        _pgbench([pgbench, "-i", "-q", "-s", "1", *connect, PGBENCH_DATABASE], "pgbench -i")
        out = _pgbench([pgbench, "-N", "-n", "-c", "1", "-j", "1", *limit, *connect, PGBENCH_DATABASE], "pgbench")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{PGBENCH_DATABASE}"')
    found = re.search(r"tps = ([0-9.]+)", out)
    if found is None:
        raise SystemExit(f"error: pgbench printed no tps:\n{out}")
    return Reference(f"pgbench simple-update (-N), 1 client, {length}", float(found.group(1)))


def _pgbench(command: list[str], what: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"error: {what} failed (exit status {done.returncode}): {done.stderr.strip()}")
    return done.stdout


def _libpq(url: str) -> str:
    """A Django-style ``postgres://`` URL as one libpq accepts for the same server's ``postgres`` database."""
    parts = urlsplit(url)
    return parts._replace(scheme="postgresql", path="/postgres").geturl()
