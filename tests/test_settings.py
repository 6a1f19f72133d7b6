"""The settings module, run in fresh processes with chosen environments."""

from __future__ import annotations

import json
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


# Reading a setting imports only the settings module: a fifth of the time django.setup() takes.
PRINT = (
    "import os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); "
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
        "core.cache.RedisCache",
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


@pytest.mark.parametrize(("value", "disabled"), [(None, "False"), ("0", "True")])
def test_server_side_cursors_can_be_turned_off_for_a_transaction_pooler(tmp_path, value, disabled):
    env = {"DATABASE_URL": "postgres://u:p@127.0.0.1:5432/ladder", "LADDER_VAR_DIR": str(tmp_path)}
    if value is not None:
        env["DATABASE_SERVER_SIDE_CURSORS"] = value
    code = PRINT.split("print(")[0] + "print(s.DATABASES['default']['DISABLE_SERVER_SIDE_CURSORS'])"

    result = run(["-c", code], env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [disabled]


@pytest.mark.django_db
def test_suite_runs_on_postgresql_through_psycopg3():
    from django.db import connection

    assert connection.vendor == "postgresql"
    assert connection.Database.__name__ == "psycopg"


@pytest.mark.django_db
def test_new_connections_have_postgresql_check_for_a_vanished_client():
    from django.db import connections

    connection = connections.create_connection("default")  # a new one, as a web or Celery process opens
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW client_connection_check_interval")
            assert cursor.fetchone() == ("5s",)
    finally:
        connection.close()


def test_client_connection_check_can_be_turned_off(tmp_path):
    env = {"DATABASE_URL": "postgres://u:p@127.0.0.1:5432/ladder", "LADDER_VAR_DIR": str(tmp_path)}
    code = PRINT.split("print(")[0] + "print(repr(s.DATABASES['default']['OPTIONS'].get('options')))"

    generic = "-c plan_cache_mode=force_generic_plan"
    assert run(["-c", code], env).stdout.strip() == f"'{generic} -c client_connection_check_interval=5000'"
    assert run(["-c", code], {**env, "DATABASE_CLIENT_CHECK_MS": "0"}).stdout.strip() == f"'{generic}'"
    # Behind PgBouncer: nothing is prepared, and no startup option is sent (it would refuse it).
    pooled = {**env, "DATABASE_CLIENT_CHECK_MS": "0", "DATABASE_PREPARED_STATEMENTS": "0"}
    assert run(["-c", code], pooled).stdout.strip() == "None"


CELERY_LIMITS = (
    PRINT.split("print(")[0] + "from config.celery import app; c = app.conf; "
    "print(c.broker_transport_options['visibility_timeout'], c.task_time_limit, c.task_soft_time_limit)"
)


def test_celery_gives_a_lost_task_to_another_worker_after_its_longest_possible_run(tmp_path):
    """Not Redis's hour: the longest retry delay (600 s) plus the time limit plus a minute."""
    env = {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0", "LADDER_VAR_DIR": str(tmp_path)}

    assert run(["-c", CELERY_LIMITS], env).stdout.split() == ["1260", "600", "570"]
    assert run(["-c", CELERY_LIMITS], {**env, "CELERY_TASK_TIME_LIMIT": "120"}).stdout.split() == ["780", "120", "90"]


def test_a_visibility_timeout_shorter_than_a_task_is_refused(tmp_path):
    env = {"CELERY_VISIBILITY_TIMEOUT": "900", "LADDER_VAR_DIR": str(tmp_path)}

    result = run(["manage.py", "check"], env)

    assert result.returncode != 0
    assert "CELERY_VISIBILITY_TIMEOUT must exceed 600 s" in result.stderr


def test_an_audit_trail_kept_less_than_a_year_is_refused(tmp_path):
    result = run(["manage.py", "check"], {"AUDIT_KEEP_DAYS": "30", "LADDER_VAR_DIR": str(tmp_path)})

    assert result.returncode != 0
    assert "AUDIT_KEEP_DAYS must be at least 366 (a year); got 30" in result.stderr


def test_cache_timeouts_are_short(tmp_path):
    env = {"CACHE_URL": "redis://127.0.0.1:6379/1", "LADDER_VAR_DIR": str(tmp_path)}
    code = PRINT.split("print(")[0] + "print(*sorted(s.CACHES['default']['OPTIONS'].items()))"

    assert run(["-c", code], env).stdout.split() == [
        "('retry_seconds',",
        "5.0)",
        "('socket_connect_timeout',",
        "0.25)",
        "('socket_timeout',",
        "0.5)",
    ]
    assert "CACHE_TIMEOUT must be a number" in run(["-c", code], {**env, "CACHE_TIMEOUT": "soon"}).stderr


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "0 None"),
        ({"PROXY_COUNT": "1"}, "1 1"),
        ({"API_NUM_PROXIES": "2"}, "2 2"),
        ({"PROXY_COUNT": "0", "API_NUM_PROXIES": "2"}, "0 None"),
    ],
)
def test_logins_and_api_throttles_count_the_same_proxies(tmp_path, env, expected):
    """One setting says how many proxies stand in front: login and sign-up limits and API throttles agree."""
    code = (
        "import os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; "
        "from django.conf import settings as s; print(s.PROXY_COUNT, s.REST_FRAMEWORK['NUM_PROXIES'])"
    )
    result = run(["-c", code], {"LADDER_VAR_DIR": str(tmp_path), **env})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == expected.split()


REPLICA_PRINT = PRINT.split("print(")[0] + (
    "import json; replica = s.DATABASES.get('replica'); "
    "print(json.dumps({'aliases': sorted(s.DATABASES), 'routers': s.DATABASE_ROUTERS, "
    "'middleware': s.MIDDLEWARE[-2:], "
    "'replica': replica and {k: replica[k] for k in ('NAME', 'HOST', 'PORT', 'USER', 'OPTIONS', 'TEST', "
    "'CONN_MAX_AGE', 'DISABLE_SERVER_SIDE_CURSORS')}}))"
)
PRIMARY = {"DATABASE_URL": "postgres://u:p@10.0.0.1:5432/ladder"}


@pytest.mark.parametrize("env", [{}, PRIMARY], ids=["embedded", "postgresql"])
def test_without_a_replica_url_there_is_one_database_and_no_router(tmp_path, env):
    result = run(["-c", REPLICA_PRINT], {**env, "LADDER_VAR_DIR": str(tmp_path)})

    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["aliases"] == ["default"]
    assert shown["routers"] == []
    assert shown["middleware"] == ["core.middleware.ServiceUnavailableMiddleware", "axes.middleware.AxesMiddleware"]
    assert shown["replica"] is None


def test_a_replica_url_adds_the_replica_with_the_primarys_options(tmp_path):
    env = {
        **PRIMARY,
        "DATABASE_REPLICA_URL": "postgres://reader:secret@10.0.0.2:6432/ladder?sslmode=require",
        "DATABASE_PREPARED_STATEMENTS": "0",
        "DATABASE_SERVER_SIDE_CURSORS": "0",
        "DATABASE_CONN_MAX_AGE": "30",
        "LADDER_VAR_DIR": str(tmp_path),
    }

    result = run(["-c", REPLICA_PRINT], env)

    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["aliases"] == ["default", "replica"]
    assert shown["routers"] == ["core.replica.ReplicaRouter"]
    # Innermost but axes (which must be last): open to the view alone, pinning once the user is known.
    assert shown["middleware"] == ["core.replica.ReplicaMiddleware", "axes.middleware.AxesMiddleware"]
    replica = shown["replica"]
    assert (replica["NAME"], replica["HOST"], replica["PORT"], replica["USER"]) == (
        "ladder",
        "10.0.0.2",
        6432,
        "reader",
    )
    assert (replica["CONN_MAX_AGE"], replica["DISABLE_SERVER_SIDE_CURSORS"]) == (30, True)
    assert replica["OPTIONS"] == {
        "prepare_threshold": None,
        "options": "-c client_connection_check_interval=5000",
        "connect_timeout": 2,
        "sslmode": "require",
    }
    assert replica["TEST"]["MIRROR"] == "default"  # the test run makes no second database


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DATABASE_REPLICA_URL": "postgres://u@10.0.0.2/ladder"}, "DATABASE_REPLICA_URL needs DATABASE_URL"),
        ({**PRIMARY, "DATABASE_REPLICA_URL": "sqlite:///replica.db"}, "must name a PostgreSQL standby"),
        ({**PRIMARY, "DATABASE_REPLICA_URL": "not a url"}, "DATABASE_REPLICA_URL is not a database URL"),
        (
            {**PRIMARY, "DATABASE_REPLICA_URL": "postgres://u@10.0.0.2/ladder", "DATABASE_REPLICA_PIN_SECONDS": "7"},
            "DATABASE_REPLICA_PIN_SECONDS must exceed DATABASE_REPLICA_MAX_LAG_SECONDS plus "
            "DATABASE_REPLICA_CHECK_SECONDS (7)",
        ),
        (
            {**PRIMARY, "DATABASE_REPLICA_URL": "postgres://u@10.0.0.2/ladder", "DATABASE_REPLICA_CHECK_SECONDS": "0"},
            "must be above 0",
        ),
    ],
    ids=["embedded primary", "not postgresql", "not a url", "pin too short", "no check"],
)
def test_a_replica_that_cannot_work_is_refused(tmp_path, env, message):
    result = run(["manage.py", "check"], {**env, "LADDER_VAR_DIR": str(tmp_path)})

    assert result.returncode != 0
    assert message in result.stderr
