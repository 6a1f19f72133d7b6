"""The settings module, run in fresh processes with chosen environments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k8#Qe2vX!mR7@pL4zT9wY1nB6cF3hJ0sD5gA8uE2iO7rK4xV9qW1tZ6yN3bM0",
    "ALLOWED_HOSTS": "ladder.example.org",
}


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    inherited = {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in inherited}
    clean.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    env = {**PRODUCTION, "LADDER_VAR_DIR": str(tmp_path)}

    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_production_without_secret_key_refuses_to_start(tmp_path):
    env = {**PRODUCTION, "SECRET_KEY": "", "LADDER_VAR_DIR": str(tmp_path)}

    result = run(["manage.py", "check"], env)

    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_bad_boolean_is_named(tmp_path):
    result = run(["manage.py", "check"], {"DEBUG": "maybe", "LADDER_VAR_DIR": str(tmp_path)})

    assert result.returncode != 0
    assert "DEBUG must be one of" in result.stderr


PRINT = (
    "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'ladder.settings'); django.setup(); "
    "from django.conf import settings as s; "
    "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.CACHES['default']['BACKEND'], "
    "s.SESSION_ENGINE)"
)


def test_embedded_default_is_sqlite_and_eager_celery(tmp_path):
    result = run(["-c", PRINT], {"LADDER_VAR_DIR": str(tmp_path)})

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.db.backends.sqlite3",
        "True",
        "django.core.cache.backends.locmem.LocMemCache",
        "django.contrib.sessions.backends.db",
    ]


def test_urls_switch_to_postgresql_and_redis(tmp_path):
    env = {
        "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/ladder",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        "CACHE_URL": "redis://127.0.0.1:6379/1",
    }

    result = run(["-c", PRINT], env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.db.backends.postgresql",
        "False",
        "ladder.cache.RedisCache",
        "django.contrib.sessions.backends.cached_db",
    ]


@pytest.mark.parametrize(("value", "threshold"), [(None, "5"), ("0", "None")])
def test_prepared_statements_on_postgresql_can_be_turned_off(tmp_path, value, threshold):
    env = {"DATABASE_URL": "postgres://u:p@127.0.0.1:5432/ladder", "LADDER_VAR_DIR": str(tmp_path)}
    if value is not None:
        env["DATABASE_PREPARED_STATEMENTS"] = value
    code = PRINT.split("print(")[0] + "print(s.DATABASES['default']['OPTIONS']['prepare_threshold'])"

    result = run(["-c", code], env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [threshold]


@pytest.mark.django_db
def test_suite_runs_on_postgresql_through_psycopg3():
    from django.db import connection

    assert connection.vendor == "postgresql"
    assert connection.Database.__name__ == "psycopg"
