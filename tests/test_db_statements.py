"""``core.db``'s hand-written statements run on Django's own connection, with its health check."""

from __future__ import annotations

import os

import pytest
from django.db import close_old_connections, connection

from core import db
from tests.factories import other_connection


def backend_pid() -> int:
    with db.prepared_cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    bool(os.environ.get("TEST_DATABASE_POOLER")),
    reason="behind a pooler the backend is the pooler's server connection, which it replaces itself",
)
def test_a_statement_after_the_server_dropped_the_connection_reconnects():
    """As at the start of a request (``close_old_connections``): the dropped connection fails the
    health check, and the statement runs on a new one instead of failing the request."""
    assert connection.settings_dict["CONN_HEALTH_CHECKS"]
    before = backend_pid()
    with other_connection() as other:
        other.execute("SELECT pg_terminate_backend(%s)", [before])
    close_old_connections()  # a request starts

    after = backend_pid()
    with db.run_statement(db.Statement.of("SELECT %(one)s::int + 1"), {"one": 1}) as cursor:
        two = cursor.fetchone()[0]

    assert after != before and two == 2


@pytest.mark.django_db
@pytest.mark.skipif(
    bool(os.environ.get("TEST_DATABASE_POOLER")), reason="behind a pooler nothing is prepared (docs/operations.md)"
)
def test_a_prepared_statement_keeps_its_generic_plan_from_the_start():
    """``plan_cache_mode`` (config/settings.py): once psycopg has prepared a hand-written statement,
    PostgreSQL runs its generic plan and never plans it again for the parameters of a run."""
    from ladder.matches import sql

    statement = sql.LOCK_MEMBERS_SQL
    for _ in range(8):  # psycopg prepares it after its fifth run
        with db.prepared_cursor() as cursor:
            cursor.execute(statement, [1, 1, 1, [1, 2]])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%ORDER BY r.id FOR UPDATE OF r"],
        )
        plans = cursor.fetchall()

    [(generic, custom)] = plans  # prepared once, on this connection
    assert generic >= 3 and custom == 0  # the runs once prepared, each on the generic plan
