"""The queue panel's reads: one statement on PostgreSQL, the same values as the ORM's elsewhere."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from matchmaking import selectors, services
from matchmaking.models import EntryStatus, QueueEntry
from tests.factories import LadderFactory, member

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sql_or_orm")]


def values(instance):
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


@pytest.mark.ladder(queue_widening_per_minute=0.01)
def test_ladder_and_latest_entry_match_the_orm(sql_or_orm, ladder, player, django_assert_num_queries):
    now = timezone.now()
    services.queue_join(ladder=ladder, player=player, max_rating_gap=120, now=now - timedelta(minutes=1))
    services.queue_leave(ladder=ladder, player=player, now=now - services.QUEUE_REJOIN_COOLDOWN)
    services.queue_join(ladder=ladder, player=player, now=now)

    with django_assert_num_queries(1 if sql_or_orm == "sql" else 2) as captured:
        found, entry = selectors.ladder_and_entry(slug="chess", player=player)

    latest = QueueEntry.objects.filter(player=player).latest("pk")
    assert values(found) == values(ladder.__class__.objects.get(pk=ladder.pk))
    assert values(entry) == values(latest) and entry.status == EntryStatus.WAITING
    assert entry.ladder is found
    assert not found._state.adding and not entry._state.adding
    assert "'chess'" in captured.captured_queries[0]["sql"]  # logged with its parameters


def test_ladder_without_a_search_and_unknown_ladder(ladder, player):
    other = LadderFactory(slug="go")
    services.queue_join(ladder=other, player=member(other, "carol"))

    assert selectors.ladder_and_entry(slug="chess", player=player) == (ladder, None)
    assert selectors.ladder_and_entry(slug="nowhere", player=player) == (None, None)


def prepared_panel_statements():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%FROM ladder_ladder AS l%"]
        )
        return cursor.fetchone()[0]


@pytest.mark.skipif(
    connection.settings_dict.get("OPTIONS", {}).get("prepare_threshold") is None,
    reason="DATABASE_PREPARED_STATEMENTS=0 (behind PgBouncer: make test-pgbouncer)",
)
def test_the_panel_statement_is_prepared_on_the_connection(sql_or_orm, ladder, player):
    before = prepared_panel_statements()

    for _ in range(6):  # prepared after five runs on a connection (DATABASE_PREPARED_STATEMENTS)
        assert selectors.ladder_and_entry(slug="chess", player=player) == (ladder, None)

    assert prepared_panel_statements() == (1 if sql_or_orm == "sql" else before)
