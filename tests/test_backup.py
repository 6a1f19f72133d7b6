"""Backups (core/backups.py, `manage.py backup` / `restore`): the demo dumped from a running
PostgreSQL, restored into an empty database by another process, and a full replay of every
ladder there giving the restored ratings bit for bit."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from core.backups import BackupError, Database, backup, restore
from ratings.replay import REPLAYED_FIELDS

ROOT = Path(__file__).resolve().parents[1]


def conninfo(name: str) -> dict[str, object]:
    settings = connection.settings_dict
    return {
        "host": settings["HOST"],
        "port": settings["PORT"],
        "user": settings["USER"],
        "password": settings["PASSWORD"] or None,
        "dbname": name,
    }


def url(name: str) -> str:
    settings = connection.settings_dict
    password = f":{settings['PASSWORD']}" if settings["PASSWORD"] else ""
    return f"postgres://{settings['USER']}{password}@{settings['HOST']}:{settings['PORT']}/{name}"


def ratings_in(name: str) -> list[tuple]:
    """Every rating of every ladder, as the database holds it (floats exactly)."""
    columns = ", ".join(f"r.{field}" for field in REPLAYED_FIELDS)
    with psycopg.connect(**conninfo(name)) as con:
        return con.execute(
            f"SELECT l.slug, u.username, {columns} FROM ratings_playerrating r "
            "JOIN ladder_ladder l ON l.id = r.ladder_id JOIN accounts_user u ON u.id = r.player_id "
            "ORDER BY l.slug, u.username"
        ).fetchall()


def manage(*args: str, database: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": url(database)}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def empty_database():
    name = f"{connection.settings_dict['NAME']}_restored"[:63]
    with psycopg.connect(**conninfo("postgres"), autocommit=True) as con:
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        con.execute(f'CREATE DATABASE "{name}"')
    yield name
    with psycopg.connect(**conninfo("postgres"), autocommit=True) as con:
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def target(name: str) -> Database:
    return Database(engine="postgresql", settings={**connection.settings_dict, "NAME": name})


@pytest.mark.django_db(transaction=True)
def test_the_demo_backed_up_restores_into_an_empty_database_and_replays_to_its_ratings(tmp_path, empty_database):
    call_command("seed_demo", force=True, stdout=open(os.devnull, "w"))  # noqa: SIM115
    live = ratings_in(connection.settings_dict["NAME"])
    assert len(live) > 60
    dump = tmp_path / "demo.dump"

    call_command("backup", str(dump), stdout=open(os.devnull, "w"))  # noqa: SIM115
    restore(source=dump, db=target(empty_database))

    assert ratings_in(empty_database) == live
    # Another process, configured for the restored database alone, replays every ladder there.
    verified = manage("replay_ratings", "--verify", database=empty_database)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.count("bit for bit") == 2  # both demo ladders
    assert ratings_in(empty_database) == live  # the check wrote nothing
    # Restoring again into what is now a full database is refused, and changes nothing.
    with pytest.raises(BackupError, match="is not empty"):
        restore(source=dump, db=target(empty_database))


def test_a_replay_that_differs_is_reported_and_exits_1(ladder, player, opponent, moderator, capsys):
    from ladder.matches import reporting
    from ladder.matches.checks import SideInput
    from ratings.models import PlayerRating

    reporting.match_report(ladder=ladder, reporter=moderator, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    call_command("replay_ratings", verify=True)
    assert "bit for bit" in capsys.readouterr().out
    PlayerRating.objects.filter(ladder=ladder, player=player).update(rating=1234.5)

    with pytest.raises(CommandError, match="1 of 1 ladders differ") as refused:
        call_command("replay_ratings", verify=True)

    assert refused.value.returncode == 1
    assert f"player {player.pk} rating: stored 1234.5, replayed" in capsys.readouterr().out
    assert PlayerRating.objects.get(ladder=ladder, player=player).rating == 1234.5  # nothing written


def test_a_restore_needs_an_empty_database_and_a_file(db, tmp_path):
    with pytest.raises(CommandError, match="is not empty"):
        call_command("restore", __file__)
    with pytest.raises(CommandError, match="is not a file"):
        call_command("restore", str(tmp_path / "missing.dump"))


def test_a_backup_never_overwrites_a_file(db, tmp_path):
    existing = tmp_path / "old.dump"
    existing.write_bytes(b"keep me")
    with pytest.raises(CommandError, match="exists already"):
        call_command("backup", str(existing))
    assert existing.read_bytes() == b"keep me"


def test_a_broken_dump_restores_nothing(tmp_path, empty_database):
    broken = tmp_path / "broken.dump"
    broken.write_bytes(b"PGDMP not really")

    with pytest.raises(BackupError, match="pg_restore failed, nothing was restored"):
        restore(source=broken, db=target(empty_database))

    with psycopg.connect(**conninfo(empty_database)) as con:
        assert con.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)


def test_the_embedded_sqlite_file_backs_up_and_restores(tmp_path):
    live = tmp_path / "site.sqlite3"
    with sqlite3.connect(live) as con:
        con.execute("CREATE TABLE t (x REAL)")
        con.executemany("INSERT INTO t VALUES (?)", [(0.1 * n,) for n in range(100)])
    copy = tmp_path / "backup.sqlite3"
    backup(target=copy, db=Database(engine="sqlite", settings={"NAME": str(live)}))
    target = tmp_path / "restored.sqlite3"

    restore(source=copy, db=Database(engine="sqlite", settings={"NAME": str(target)}))

    with sqlite3.connect(target) as con:
        assert con.execute("SELECT x FROM t ORDER BY rowid").fetchall() == [(0.1 * n,) for n in range(100)]
    with pytest.raises(BackupError, match="is not empty"):
        restore(source=copy, db=Database(engine="sqlite", settings={"NAME": str(target)}))
