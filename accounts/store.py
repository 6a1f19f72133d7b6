"""The accounts app's seam to the database: each statement in its PostgreSQL and its ORM form.

Each function here is one statement and chooses, in one place, between its hand-written
SQL (PostgreSQL) and its ORM twin (other databases: ``make run``'s SQLite), through
``core.db.on_postgresql()``; callers never ask which database they are on. The tests run
both sides (``core.db.orm_twins()`` makes PostgreSQL take the twins).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from core import db

if TYPE_CHECKING:  # accounts.models calls this module
    from accounts.models import User


def user_by_pk(model: type[User], pk: int, orm_get: Callable[[], User]) -> User:
    """The user ``pk`` (``model`` is the user model), as ``get(pk=pk)`` returns it: on PostgreSQL one
    statement prepared on the connection, elsewhere ``orm_get``, the ORM's own ``get``."""
    if not db.on_postgresql():
        return orm_get()
    names, statement = _user_by_pk(model)
    with db.prepared_cursor() as cursor:
        cursor.execute(statement, [pk])
        row = cursor.fetchone()
    if row is None:
        raise model.DoesNotExist(f"{model._meta.object_name} matching query does not exist.")
    return db.instance(model, names, row)


@cache
def _user_by_pk(model: type[User]) -> tuple[list[str], str]:
    names, columns = db.column_list(model, "u")
    return names, f"SELECT {columns} FROM {model._meta.db_table} AS u WHERE u.id = %s"
