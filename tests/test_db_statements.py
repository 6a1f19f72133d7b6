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
