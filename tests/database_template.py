"""One migrated database per run, which every pytest-xdist worker's test database is copied from.

Each worker used to build its test database by running every migration, so a run on two
workers migrated twice and a run on four, four times. ``migrated_template`` migrates once, in a
database named by a digest of the migrations and of the installed packages, and each worker's
test database is then made with PostgreSQL's ``CREATE DATABASE … TEMPLATE`` (Django's
``TEST["TEMPLATE"]``), after which Django's own ``migrate`` finds nothing to apply and only runs
the ``post_migrate`` sync. A template already on the server from an earlier run with the same
digest is used as it is: on a developer's own PostgreSQL the second run migrates nothing.

The workers take a PostgreSQL advisory lock while they look, so exactly one migrates; the
template is built under a temporary name and renamed when complete, so a run stopped halfway
leaves nothing another run would trust.

``migrated_sqlite`` does the same for the tests that run the embedded default (SQLite, ``make
run``) in a fresh process: one migrated SQLite file per run, in a folder every worker sees,
which each such test copies into its own ``LADDER_VAR_DIR``. Migrating SQLite took each of them
over 20 s of a core.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
LOCK_KEY = 7_316_402_911  # the advisory lock's key: any number the site itself never locks
# What the embedded default's migrate must not inherit from the suite (as tests/test_settings.py's run).
SUITE_ONLY = frozenset(
    {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
)


def digest() -> str:
    """What the migrated schema depends on: every migration and sync module here, and the
    versions of the installed packages (whose own migrations make tables too)."""
    hashed = hashlib.sha256()
    for path in [*sorted(ROOT.glob("*/migrations/*.py")), ROOT / "accounts" / "sync.py"]:
        hashed.update(path.relative_to(ROOT).as_posix().encode())
        hashed.update(path.read_bytes())
    for dist in sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()):
        hashed.update(dist.encode())
    return hashed.hexdigest()[:12]


def server_url(db: dict[str, Any], database: str) -> str:
    user = quote(db.get("USER") or "", safe="")
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    return f"postgresql://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{database}"


def migrated_template(db: dict[str, Any]) -> str:
    """The name of a database with every migration applied, made now if the server has none."""
    import psycopg
    from psycopg import sql

    name = f"test_{db['NAME']}_template_{digest()}"[:63]
    building = f"{name[:54]}_building"
    with psycopg.connect(server_url(db, "postgres"), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
        try:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                return name
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(building)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(building)))
            env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
            env["DATABASE_URL"] = server_url(db, building)
            migrate(env, "the test template")
            conn.execute(
                sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(building), sql.Identifier(name))
            )
            return name
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])


def migrate(env: dict[str, str], what: str) -> None:
    """``manage.py migrate`` in a process of its own with ``env``; ``what`` names it in the error."""
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrating {what} failed:\n{done.stdout}{done.stderr}")


def migrated_sqlite(shared: Path) -> Path:
    """A SQLite database of the embedded default with every migration applied, made in ``shared``
    (a folder every pytest-xdist worker of the run sees) unless another worker made it already."""
    done = shared / f"embedded-{digest()}"
    with (shared / "embedded.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (done / "db.sqlite3").exists():
            return done / "db.sqlite3"
        building = shared / "embedded-building"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir()
        env = {key: value for key, value in os.environ.items() if key not in SUITE_ONLY}
        env["LADDER_VAR_DIR"] = str(building)
        migrate(env, "the embedded default's SQLite")
        building.rename(done)
        return done / "db.sqlite3"
