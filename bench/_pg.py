"""A PostgreSQL for the database benchmarks, and Django set up on it.

When ``DATABASE_URL`` (a ``postgres://`` URL) is set, its server is used: each run creates
a scratch database there (``ladder_bench_<pid>``) and drops it on the way out, so a run
starts from an empty database, can be repeated, and leaves the database the URL names as
it was. ``BENCH_TEMPLATE_DATABASE`` names a migrated database on that server to copy
instead of starting empty (``CREATE DATABASE … TEMPLATE``), so many short runs (the tests')
migrate once. Otherwise
``database()`` starts a throwaway server the way ``scripts/test.sh`` does: ``initdb`` and
``pg_ctl`` from ``/usr/lib/postgresql/*/bin`` (as the ``postgres`` user through
``runuser`` when run as root), data in a fresh ``/tmp`` folder, loopback only, a free
port, ``fsync=off``; it is stopped and its folder removed on the way out, whatever
happens in between.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_SCHEMES = ("postgres://", "postgresql://", "pgsql://")
DATABASE_NAME = "ladder_bench"
_copied = False  # the scratch database is a copy of BENCH_TEMPLATE_DATABASE, migrated already


def log(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


def pg_bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name.split(".")[0]))
    if not found:
        raise SystemExit("error: no /usr/lib/postgresql/*/bin (apt-get install postgresql), and no DATABASE_URL")
    return found[-1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_postgres() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _run(command: list[str], logfile: Path, what: str) -> None:
    with logfile.open("ab") as out:
        status = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    if status != 0:
        sys.stderr.write(logfile.read_text(errors="replace"))
        raise SystemExit(f"error: {what} failed (exit status {status})")


@contextmanager
def throwaway_server(extra_settings: Sequence[str] = ()) -> Iterator[str]:
    """Start a PostgreSQL on loopback, yield the URL of an empty database, then stop it."""
    bindir = pg_bindir()
    workdir = Path(tempfile.mkdtemp(prefix="ladder-bench.", dir="/tmp"))
    started = False
    try:
        workdir.chmod(0o755)
        if os.geteuid() == 0:
            shutil.chown(workdir, "postgres", "postgres")
        port = free_port()
        log(f"starting PostgreSQL {bindir.parent.name} on 127.0.0.1:{port} (data in {workdir})")
        data = str(workdir / "pg")
        initdb = [str(bindir / "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]
        _run([*_as_postgres(), *initdb], workdir / "initdb.log", "initdb")
        options = [
            f"-p {port}",
            f"-k {workdir}",
            "-c listen_addresses=127.0.0.1",
            "-c fsync=off",
            "-c synchronous_commit=off",
            "-c full_page_writes=off",
            *(f"-c {setting}" for setting in extra_settings),
        ]
        logfile = workdir / "pg.log"
        started = True
        start = [str(bindir / "pg_ctl"), "-D", data, "-l", str(logfile), "-w", "start", "-o", " ".join(options)]
        _run([*_as_postgres(), *start], workdir / "pg_ctl.log", "starting PostgreSQL")
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
        yield f"postgres://postgres@127.0.0.1:{port}/{DATABASE_NAME}"
    finally:
        if started:
            subprocess.run(
                [*_as_postgres(), str(bindir / "pg_ctl"), "-D", str(workdir / "pg"), "-m", "immediate", "-w", "stop"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
        shutil.rmtree(workdir, ignore_errors=True)
        if started:
            log("stopped PostgreSQL")


@contextmanager
def database(extra_settings: Sequence[str] = ()) -> Iterator[str]:
    """``DATABASE_URL`` if set (it must be PostgreSQL), else a throwaway server's URL."""
    url = os.environ.get("DATABASE_URL", "")
    if url:
        if not url.startswith(POSTGRES_SCHEMES):
            raise SystemExit(f"error: DATABASE_URL must be a PostgreSQL URL ({', '.join(POSTGRES_SCHEMES)}...)")
        with scratch_database(url) as scratch:
            yield scratch
        return
    # A plain `kill` should stop the server too: turn SIGTERM into SystemExit, so `finally` runs.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with throwaway_server(extra_settings) as url:
            yield url
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def scratch_database(url: str) -> Iterator[str]:
    """A new empty database on ``url``'s server for one run, dropped afterwards (its sessions too)."""
    global _copied
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = f"ladder_bench_{os.getpid()}"
    admin = parts._replace(scheme="postgresql", path="/postgres").geturl()
    template = os.environ.get("BENCH_TEMPLATE_DATABASE", "")
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            if template:
                _copied = True
                conn.execute(
                    sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template))
                )
            else:
                conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as error:
        raise SystemExit(f"error: cannot create a scratch database on DATABASE_URL's server: {error}".strip()) from None
    log(f"using the PostgreSQL of DATABASE_URL, in a scratch database {name} (dropped afterwards)")
    try:
        yield parts._replace(path=f"/{name}").geturl()
    finally:
        close_django()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        log(f"dropped {name}")


def setup_django(url: str) -> None:
    """Point Django at ``url`` with production-like settings (DEBUG off), then migrate (unless a copy)."""
    sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    # DEBUG on would record every query in connection.queries: not what production pays.
    os.environ["DEBUG"] = "0"
    os.environ.setdefault("SECRET_KEY", "bench-only-" + "x" * 50)
    os.environ.setdefault("ALLOWED_HOSTS", "localhost")
    import django
    from django.core.management import call_command

    django.setup()
    if _copied:
        return
    log("migrating")
    call_command("migrate", verbosity=0)


def close_django() -> None:
    """Close Django's connections before the server goes away."""
    from django.conf import settings

    if settings.configured:
        from django.db import connections

        connections.close_all()


def versions() -> str:
    """``python 3.11.7, Django 5.2.19, PostgreSQL 15.18``."""
    import django
    from django.db import connection

    connection.ensure_connection()
    server = connection.connection.info.server_version
    postgres = f"{server // 10_000}.{server % 10_000}"
    return f"python {sys.version.split()[0]}, Django {django.get_version()}, PostgreSQL {postgres}"
