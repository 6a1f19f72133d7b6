"""A quicker flush after each test with ``transaction=True`` (and every browser test).

Django empties every table after such a test, then sends ``post_migrate``, which makes the
content types, the permissions, the groups and the periodic tasks again (``core.sync``):
0.3 s of the 0.4 s a flush took, for rows that hardly any test changes. Here those tables
(``KEPT``) are left as they are unless a test changed them. A statement trigger on each sets
a flag (``install``, once per test database); after a test that left it unset only the other
tables are emptied, and otherwise the flush is Django's own, ``post_migrate`` included, and
the flag is cleared. The database ends each test as Django's flush would leave it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management.color import no_style
from django.db import connections
from django.test import TransactionTestCase
from django_celery_beat import models as beat

KEPT = frozenset(
    model._meta.db_table
    for model in (
        ContentType,
        Permission,
        Group,
        Group.permissions.through,
        beat.PeriodicTask,
        beat.PeriodicTasks,
        beat.CrontabSchedule,
        beat.IntervalSchedule,
        beat.SolarSchedule,
        beat.ClockedSchedule,
    )
)
FLAG = "test_kept_tables_changed"

_INSTALL = f"""
CREATE TABLE IF NOT EXISTS {FLAG} (changed boolean NOT NULL);
INSERT INTO {FLAG} SELECT false WHERE NOT EXISTS (SELECT 1 FROM {FLAG});
CREATE OR REPLACE FUNCTION {FLAG}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {FLAG} SET changed = true WHERE NOT changed;
    RETURN NULL;
END $$;
"""


def install(alias: str = "default") -> None:
    """Put the flag and its triggers in the test database of ``alias`` (PostgreSQL only)."""
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(_INSTALL)
        for table in sorted(KEPT):
            cursor.execute(
                f"CREATE OR REPLACE TRIGGER {FLAG} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {FLAG}()"
            )


def _flag(alias: str) -> bool | None:
    """Whether a kept table changed since the flag was cleared; None without the flag."""
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT to_regclass('{FLAG}') IS NOT NULL")
        if not cursor.fetchone()[0]:
            return None
        cursor.execute(f"SELECT changed FROM {FLAG}")
        row = cursor.fetchone()
    return None if row is None else row[0]


def _teardown(django_teardown: Callable[[TransactionTestCase], None]) -> Callable[[TransactionTestCase], None]:
    def teardown(case: TransactionTestCase) -> None:
        aliases = list(case._databases_names(include_mirrors=False))  # type: ignore[attr-defined]
        flags = {alias: _flag(alias) for alias in aliases}
        if case.available_apps is not None or case.serialized_rollback or any(flags.values()) or None in flags.values():
            django_teardown(case)
            for alias, flag in flags.items():
                if flag is not None:
                    with connections[alias].cursor() as cursor:
                        cursor.execute(f"UPDATE {FLAG} SET changed = false")
            return
        for alias in aliases:
            connection = connections[alias]
            tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
            statements = connection.ops.sql_flush(
                no_style(), [table for table in tables if table not in KEPT], reset_sequences=False
            )
            connection.ops.execute_sql_flush(statements)

    return teardown


def enable() -> None:
    """Make every ``TransactionTestCase`` (pytest-django's ``transactional_db``) flush this way."""
    django_teardown: Any = TransactionTestCase._fixture_teardown
    if getattr(django_teardown, "quick", False):
        return
    quick: Any = _teardown(django_teardown)
    quick.quick = True
    TransactionTestCase._fixture_teardown = quick  # type: ignore[method-assign]
