"""How the queue's hand-written statements run: on PostgreSQL only, prepared on each connection.

A poll runs two of them (its ladder and search, then the search for a partner). Django's
cursors bind parameters on the client, so PostgreSQL parses and plans every statement
anew, and for these two the planning costs several times the execution.
``prepared_cursor`` binds on the server instead, so psycopg prepares a statement once it
has run ``prepare_threshold`` times on a connection (the ``DATABASE_PREPARED_STATEMENTS``
setting; off, nothing is prepared) and PostgreSQL soon keeps a generic plan. It still
goes through Django's cursor wrapper, so execute wrappers and error translation apply
as to any other query. While queries are logged (DEBUG, ``assertNumQueries``) it is a
plain Django cursor: a prepared statement's cursor does not keep the SQL the log shows.
Other databases run the ORM versions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.backends.utils import CursorWrapper


def postgresql() -> bool:
    """Whether the hand-written statements run (PostgreSQL) or their ORM versions."""
    return connection.vendor == "postgresql"


@contextmanager
def prepared_cursor() -> Iterator[CursorWrapper]:
    """A server-side binding cursor on Django's PostgreSQL connection (see the module docstring)."""
    import psycopg

    if connection.queries_logged:
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        raw = psycopg.Cursor(connection.connection)
    cursor = connection.make_debug_cursor(raw) if connection.queries_logged else connection.make_cursor(raw)
    with cursor:
        yield cursor
