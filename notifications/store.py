"""The notifications app's seam to the database: each statement in its PostgreSQL and its ORM form.

Each function here is one statement and chooses, in one place, between its hand-written
SQL (PostgreSQL) and its ORM twin (other databases: ``make run``'s SQLite), through
``core.db.on_postgresql()``; callers never ask which database they are on. The tests run
both sides (``core.db.orm_twins()`` makes PostgreSQL take the twins).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db.models import BooleanField, Case, F, Q, Value, When
from django.db.models.functions import Lower

from accounts.models import User
from core import db
from notifications.models import Notification

# ``recipient_rows`` on PostgreSQL: each user's name, and whether they get mail.
_RECIPIENTS = (
    "SELECT id, username, is_active AND email <> '' AND lower(email) = lower(email_verified)"
    f" FROM {User._meta.db_table} WHERE id = ANY(%s)"
)


def recipient_rows(user_ids: Iterable[int]) -> list[tuple[int, str, bool]]:
    """``(id, username, gets mail)`` of each of ``user_ids``: on PostgreSQL one statement prepared
    on the connection, elsewhere its ORM twin."""
    if db.on_postgresql():
        with db.prepared_cursor() as cursor:
            cursor.execute(_RECIPIENTS, [list(user_ids)])
            return cursor.fetchall()
    return _recipient_rows_orm(user_ids)


def _recipient_rows_orm(user_ids: Iterable[int]) -> list[tuple[int, str, bool]]:
    verified = Q(is_active=True, address=F("verified")) & ~Q(email="")
    rows = (
        User.objects.filter(pk__in=list(user_ids))
        .annotate(address=Lower("email"), verified=Lower("email_verified"))
        .annotate(mail=Case(When(verified, then=Value(True)), default=Value(False), output_field=BooleanField()))
        .values_list("pk", "username", "mail")
    )
    return list(rows)


def notifications_insert(rows: Sequence[Notification]) -> None:
    """Insert ``rows``, skipping those already there (``(recipient, kind, key)`` is unique); only
    ``notifications.services.notify`` calls this."""
    if db.on_postgresql():  # one statement prepared on the connection; the ORM builds its SQL anew
        db.insert_rows(rows, ignore_conflicts=True)
    else:
        Notification.objects.bulk_create(rows, ignore_conflicts=True)
