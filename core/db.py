"""How the hand-written statements of the hot paths run: on PostgreSQL only, prepared on each connection.

The queue's poll, and an API report's token, ladder and players look-ups, each run a few
statements many times a second. Django's cursors bind parameters on the client, so
PostgreSQL parses and plans every statement anew, and for these the planning costs
several times the execution.
``prepared_cursor`` binds on the server instead, so psycopg prepares a statement once it
has run ``prepare_threshold`` times on a connection (the ``DATABASE_PREPARED_STATEMENTS``
setting; off, nothing is prepared), and PostgreSQL runs its generic plan from then on
(``plan_cache_mode``, set for the connection in config/settings.py): left to choose, it
planned a report's statements again for every run, which cost more than running them.
So each statement here is written for the plan it gets whatever its parameters: where the
best plan depends on the data, it comes in one shape per plan and the caller picks (a
report's duplicate check, ``ladder.matches.sql``). It still
goes through Django's cursor wrapper, so execute wrappers and error translation apply
as to any other query. While queries are logged (DEBUG, ``assertNumQueries``) it is a
plain Django cursor: a prepared statement's cursor does not keep the SQL the log shows.
Other databases run the ORM versions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)


_orm_forced = False


def on_postgresql() -> bool:
    """The one switch every hand-written statement asks: run it (PostgreSQL) or its ORM twin.

    Every app's ``sql.py`` statement has an ORM twin for the other databases (``make run``'s
    SQLite); ``orm_twins()`` makes PostgreSQL take the twins too, so a test runs both.
    """
    return not _orm_forced and connection.vendor == "postgresql"


@contextmanager
def orm_twins() -> Iterator[None]:
    """Within the block, ``on_postgresql()`` is false: the ORM twins run, on any database."""
    global _orm_forced
    before, _orm_forced = _orm_forced, True
    try:
        yield
    finally:
        _orm_forced = before


@contextmanager
def prepared_cursor() -> Iterator[CursorWrapper]:
    """A server-side binding cursor on Django's PostgreSQL connection (see the module docstring)."""
    import psycopg

    wrapper = connections[DEFAULT_DB_ALIAS]
    if wrapper.queries_logged:
        with wrapper.cursor() as cursor:
            yield cursor
        return
    with _driver_cursor(wrapper, psycopg.Cursor) as cursor:
        yield cursor


@contextmanager
def _driver_cursor(wrapper: BaseDatabaseWrapper, cursor_class: type[Any]) -> Iterator[CursorWrapper]:
    """A psycopg cursor of ``cursor_class`` on Django's connection, wrapped as Django wraps its own.

    ``wrapper`` is the connection itself, looked up once: each attribute read through
    ``django.db.connection`` looks the connection up again (a few microseconds each, six a
    statement, on every hot path)."""
    wrapper.close_if_health_check_failed()
    wrapper.ensure_connection()
    wrapper.validate_thread_sharing()
    with wrapper.wrap_database_errors:
        raw = cursor_class(wrapper.connection)
    # Django wraps the driver's own cursor here; django-stubs types the argument as the wrapper.
    cursor = wrapper.make_cursor(raw)
    with cursor:
        yield cursor


_NAMED = re.compile(r"%\((\w+)\)s")


@dataclass(frozen=True, slots=True)
class Statement:
    """A long hand-written statement, kept in PostgreSQL's own ``$1`` form as well.

    psycopg turns ``%(name)s`` placeholders into ``$n`` on every execution, and caches the
    result only for statements up to 4,096 bytes: longer ones (a report rated in one
    statement) were parsed anew each time, half a millisecond of Python. ``numbered`` is
    that conversion, done once; ``run_statement`` sends it through psycopg's raw cursor,
    which takes it as it is.
    """

    named: str  # with %(name)s placeholders (the form the query log shows)
    numbered: str  # with $1, $2, … in the order of ``names``
    names: tuple[str, ...]

    @classmethod
    def of(cls, sql: str) -> Statement:
        if "%%" in sql:
            raise ValueError("a statement for run_statement cannot hold a literal %")
        names = tuple(dict.fromkeys(_NAMED.findall(sql)))
        number = {name: index for index, name in enumerate(names, start=1)}
        return cls(sql, _NAMED.sub(lambda found: f"${number[found.group(1)]}", sql), names)


@contextmanager
def run_statement(statement: Statement, params: Mapping[str, Any]) -> Iterator[CursorWrapper]:
    """Execute ``statement`` with ``params`` as ``prepared_cursor`` would, and yield the cursor
    for its rows; the ``$n`` form goes through psycopg's raw cursor, unparsed."""
    import psycopg

    wrapper = connections[DEFAULT_DB_ALIAS]
    if wrapper.queries_logged:
        with wrapper.cursor() as cursor:
            cursor.execute(statement.named, params)
            yield cursor
        return
    with _driver_cursor(wrapper, psycopg.RawCursor) as cursor:
        cursor.execute(statement.numbered, [params[name] for name in statement.names])
        yield cursor


def instance(model: type[M], columns: Sequence[str], values: Sequence[Any]) -> M:
    """A model instance from a hand-written statement's row, as the ORM would build it."""
    return model.from_db(connection.alias, list(columns), values)


def column_list(model: type[Model], alias: str) -> tuple[list[str], str]:
    """``model``'s concrete columns (attribute names) and the SQL that selects them from ``alias``."""
    fields = model._meta.concrete_fields
    converted = [field.name for field in fields if hasattr(field, "from_db_value")]
    if converted:  # the ORM would convert these on the way in; ``instance`` does not
        raise TypeError(f"{model.__name__}.{converted[0]} needs a converter: read it through the ORM")
    names = [field.attname for field in fields]
    columns = [field.column for field in fields]
    return names, ", ".join(f'{alias}."{column}"' for column in columns)


def insert_fields(model: type[Model], *, skip: Sequence[str] = ()) -> list[Field[Any, Any]]:
    """The columns an insert of ``model`` writes: every concrete field but the primary key and ``skip``."""
    return [field for field in model._meta.concrete_fields if not field.primary_key and field.attname not in skip]


def insert_values(instance: Model, fields: Sequence[Field[Any, Any]], prefix: str, params: dict[str, Any]) -> None:
    """``instance``'s values of ``fields`` into ``params`` under ``prefix``, as ``save()`` prepares an insert's
    (defaults, ``auto_now`` stamps set on the instance, each field's own conversion)."""
    for field in fields:
        value = field.pre_save(instance, True)
        params[f"{prefix}_{field.attname}"] = field.get_db_prep_save(value, connection)


@cache
def _insert_statement(model: type[Model], count: int, ignore_conflicts: bool) -> Statement:
    fields = insert_fields(model)
    columns = ", ".join(f'"{field.column}"' for field in fields)
    rows = ", ".join(
        "(" + ", ".join(f"%(r{number}_{field.attname})s" for field in fields) + ")" for number in range(count)
    )
    conflict = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
    return Statement.of(f"INSERT INTO {model._meta.db_table} ({columns}) VALUES {rows}{conflict}")


def insert_rows(instances: Sequence[Model], *, ignore_conflicts: bool = False) -> None:
    """Insert ``instances`` (of one model) in one statement prepared on the connection, as
    ``bulk_create`` would without reading back their keys; PostgreSQL only (``on_postgresql()``).
    ``bulk_create`` builds its SQL anew each time: this is for rows a hot path writes."""
    if not instances:
        return
    model = type(instances[0])
    fields = insert_fields(model)
    params: dict[str, Any] = {}
    for number, row in enumerate(instances):
        insert_values(row, fields, f"r{number}", params)
    with run_statement(_insert_statement(model, len(instances), ignore_conflicts), params):
        pass
