"""Each table is written by its own app: the rating history by ``ratings``, notifications by ``notifications``.

A report's single round trip writes both from a ladder statement, composed from the
fragments those apps own (``ratings.cte``, ``notifications.cte``). These tests read the
source: outside the owning app no module names those tables in SQL or writes them through
the ORM, and the report's statements still write them (through the owners' fragments).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from audit.models import AuditEntry
from ladder.matches import answers_sql, sql
from notifications.models import Notification
from ratings.models import RatingChange, RatingEvent
from stats import sql as stats_sql
from stats.models import HeadToHead

OWNED = {
    "ratings": ("RatingChange", "RatingEvent"),
    "notifications": ("Notification",),
    "audit": ("AuditEntry",),
}
WRITES = r"\.objects\.(create|bulk_create|update|get_or_create|update_or_create)\(|\._meta\.db_table"
TABLES = {
    "RatingChange": RatingChange._meta.db_table,
    "RatingEvent": RatingEvent._meta.db_table,
    "Notification": Notification._meta.db_table,
    "AuditEntry": AuditEntry._meta.db_table,
}


def _sources() -> list[Path]:
    base = Path(settings.BASE_DIR)
    apps = ["accounts", "api", "core", "ladder", "matchmaking", "notifications", "ratings", "seasons", "stats"]
    apps += ["webhooks", "audit", "tournaments"]
    return [p for app in apps for p in sorted((base / app).rglob("*.py")) if "migrations" not in p.parts]


def writers(source: str, model: str) -> list[str]:
    """The lines of ``source`` that write ``model``'s table: an ORM write, or SQL naming the table."""
    pattern = re.compile(rf"\b{model}(?:{WRITES})|\b{re.escape(TABLES[model])}\b")
    return [line.strip() for line in source.splitlines() if pattern.search(line)]


@pytest.mark.parametrize(("owner", "model"), [(o, m) for o, models in OWNED.items() for m in models])
def test_only_the_owning_app_writes_its_table(owner: str, model: str) -> None:
    base = Path(settings.BASE_DIR)
    found = {
        str(path.relative_to(base)): lines
        for path in _sources()
        if path.relative_to(base).parts[0] != owner and (lines := writers(path.read_text(), model))
    }
    # stats reads the rating history (its counts follow rating events) and never writes it.
    reads = {path: lines for path, lines in found.items() if path.startswith("stats/")}
    for lines in reads.values():
        assert all(line.startswith("_") and "db_table" in line for line in lines)
    assert {path: lines for path, lines in found.items() if path not in reads} == {}


def test_the_scan_sees_a_write_from_elsewhere() -> None:
    assert writers("Notification.objects.create(recipient=u)", "Notification")
    assert writers(f"cursor.execute('INSERT INTO {TABLES['RatingChange']} VALUES (1)')", "RatingChange")
    assert writers("Notification.objects.filter(pk=1)", "Notification") == []


def test_the_report_statements_write_both_tables_through_their_owners_fragments() -> None:
    rated_reports = [
        sql.record_statement(rated=True, by_player=by_player, composed=composed).named
        for by_player in (False, True)
        for composed in (False, True)
    ]
    for statement in (*rated_reports, answers_sql._WRITE.replace("{rating}", answers_sql._RATE)):
        assert f"INSERT INTO {TABLES['RatingEvent']}" in statement
        assert f"INSERT INTO {TABLES['RatingChange']}" in statement
        assert f"INSERT INTO {TABLES['Notification']}" in statement


def test_a_composed_report_counts_head_to_head_through_the_stats_fragment() -> None:
    # stats' CTEs are registered when the app starts (``stats.apps``), so the statement built on
    # first use holds them: the head-to-head upsert is the fragment stats owns, not a copy.
    composed = sql.record_statement(rated=True, by_player=True, composed=True).named
    plain = sql.record_statement(rated=True, by_player=True).named
    fragment = stats_sql.rated_ctes("rated_results")
    assert f"INSERT INTO {HeadToHead._meta.db_table}" in fragment
    assert fragment in composed
    assert HeadToHead._meta.db_table not in plain
