"""Backing the database up to one file and restoring it into an empty database
(docs/operations.md, "Backups").

PostgreSQL: ``pg_dump --format=custom``, which reads every table in one transaction (one
consistent snapshot while the site keeps running), and ``pg_restore --single-transaction``
into a database with no tables, so a restore either completes or leaves it empty. The
embedded SQLite: its online backup API, page by page while the site runs.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from django.db import connections


class BackupError(Exception):
    """A backup or restore that cannot go ahead; its message is one line for the operator."""


@dataclass(frozen=True, slots=True)
class Database:
    engine: str  # "postgresql" or "sqlite"
    settings: dict[str, Any]


def database(alias: str = "default") -> Database:
    settings = connections[alias].settings_dict
    engine = settings["ENGINE"].rsplit(".", 1)[-1]
    if engine not in ("postgresql", "sqlite3"):
        raise BackupError(f"backups know PostgreSQL and SQLite, not {settings['ENGINE']}")
    return Database(engine="postgresql" if engine == "postgresql" else "sqlite", settings=settings)


def _pg_args(settings: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    args = []
    if settings.get("HOST"):
        args += ["--host", str(settings["HOST"])]
    if settings.get("PORT"):
        args += ["--port", str(settings["PORT"])]
    if settings.get("USER"):
        args += ["--username", str(settings["USER"])]
    env = {**os.environ}
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = str(settings["PASSWORD"])
    return args, env


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} is not installed (Debian: apt-get install postgresql-client)")
    return found


def backup(*, target: Path, db: Database) -> None:
    """Write the whole database to ``target`` (a new file)."""
    if target.exists():
        raise BackupError(f"{target} exists already; choose a new file")
    target.parent.mkdir(parents=True, exist_ok=True)
    if db.engine == "sqlite":
        source = sqlite3.connect(db.settings["NAME"])
        try:
            copy = sqlite3.connect(target)
            with copy:
                source.backup(copy)
            copy.close()
        finally:
            source.close()
        return
    args, env = _pg_args(db.settings)
    command = [_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges", "--file", str(target)]
    done = subprocess.run(
        [*command, *args, "--dbname", str(db.settings["NAME"])], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        target.unlink(missing_ok=True)
        raise BackupError(f"pg_dump failed: {_last_line(done.stderr)}")


def tables(db: Database) -> list[str]:
    """The tables the database holds now (a restore goes only into a database with none)."""
    if db.engine == "sqlite":
        if not Path(db.settings["NAME"]).exists():
            return []
        with sqlite3.connect(db.settings["NAME"]) as lite:
            names = lite.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            return [row[0] for row in names]
    settings = db.settings
    with psycopg.connect(
        host=settings.get("HOST") or None,
        port=settings.get("PORT") or None,
        user=settings.get("USER") or None,
        password=settings.get("PASSWORD") or None,
        dbname=settings["NAME"],
    ) as con:
        rows = con.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()").fetchall()
        return [row[0] for row in rows]


def restore(*, source: Path, db: Database) -> None:
    """Load the backup ``source`` into the (empty) database: all of it or, on any error, nothing."""
    if not source.is_file():
        raise BackupError(f"{source} is not a file")
    present = tables(db)
    if present:
        raise BackupError(
            f"the database {db.settings['NAME']} is not empty ({len(present)} tables); restore into a new, empty one"
        )
    connections["default"].close()
    if db.engine == "sqlite":
        with sqlite3.connect(source) as backup_file:
            if backup_file.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
                raise BackupError(f"{source} is not a sound SQLite database")
            copy = sqlite3.connect(db.settings["NAME"])
            with copy:
                backup_file.backup(copy)
            copy.close()
        return
    args, env = _pg_args(db.settings)
    command = [_tool("pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"]
    done = subprocess.run(
        [*command, *args, "--dbname", str(db.settings["NAME"]), str(source)], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise BackupError(f"pg_restore failed, nothing was restored: {_last_line(done.stderr)}")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
