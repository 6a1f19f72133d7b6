"""The matches room's seam to the database: each of its writes in its PostgreSQL and its ORM form.

Each function here is one write (a report, a queue match's result, a confirmation) and
chooses, in one place, between its hand-written statements (PostgreSQL) and its ORM twin
(other databases: ``make run``'s SQLite), through ``core.db.on_postgresql()``; callers never
ask which database they are on. The tests run both sides (``core.db.orm_twins()`` makes
PostgreSQL take the twins).

Both versions of each write are services of this room that check, rate and notify with the
rows they read: a report's two statements (``ladder.matches.sql``) and its ORM twin are
``ladder.matches.reporting``'s, a queue match's result and confirmation in two statements
are ``ladder.matches.answers``' and their ORM twins ``reporting``'s. ``reporting`` calls this
module, so it hands both versions in and this module gives back the one to run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from core import db

Version = TypeVar("Version", bound=Callable[..., Any])


def match_report(*, in_two_statements: Version, orm: Version) -> Version:
    """A report (``reporting.match_report_with_rows``): two statements on PostgreSQL (``ladder.matches.sql``)."""
    return in_two_statements if db.on_postgresql() else orm


def match_report_result(*, in_two_statements: Version, orm: Version) -> Version:
    """A queue match's result (``reporting.match_report_result``): two statements on PostgreSQL
    (``ladder.matches.answers.report_result``)."""
    return in_two_statements if db.on_postgresql() else orm


def match_confirm(*, in_two_statements: Version, orm: Version) -> Version:
    """A player's confirmation (``reporting.match_confirm``): two statements on PostgreSQL
    (``ladder.matches.answers.confirm``)."""
    return in_two_statements if db.on_postgresql() else orm
