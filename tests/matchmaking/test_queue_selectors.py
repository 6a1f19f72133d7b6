"""The queue panel's reads: one statement on PostgreSQL, the same values as the ORM's elsewhere."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core import db
from matchmaking import selectors, services
from matchmaking.models import EntryStatus, QueueEntry
from tests.factories import LadderFactory, member

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("reads")]


@pytest.fixture(params=["sql", "orm"])
def reads(request, monkeypatch):
    if request.param == "orm":
        monkeypatch.setattr(db, "_orm_forced", True)
    return request.param


def values(instance):
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_ladder_and_latest_entry_match_the_orm(reads, django_assert_num_queries):
    ladder = LadderFactory(name="Chess", slug="chess", queue_widening_per_minute=0.01)
    alice = member(ladder, "alice")
    now = timezone.now()
    services.queue_join(ladder=ladder, player=alice, max_rating_gap=120, now=now - timedelta(minutes=1))
    services.queue_leave(ladder=ladder, player=alice, now=now - services.QUEUE_REJOIN_COOLDOWN)
    services.queue_join(ladder=ladder, player=alice, now=now)

    with django_assert_num_queries(1 if reads == "sql" else 2) as captured:
        found, entry = selectors.ladder_and_entry(slug="chess", player=alice)

    latest = QueueEntry.objects.filter(player=alice).latest("pk")
    assert values(found) == values(ladder.__class__.objects.get(pk=ladder.pk))
    assert values(entry) == values(latest) and entry.status == EntryStatus.WAITING
    assert entry.ladder is found
    assert not found._state.adding and not entry._state.adding
    assert "'chess'" in captured.captured_queries[0]["sql"]  # logged with its parameters


def test_ladder_without_a_search_and_unknown_ladder():
    ladder = LadderFactory(slug="chess")
    alice = member(ladder, "alice")
    other = LadderFactory(slug="go")
    services.queue_join(ladder=other, player=member(other, "bob"))

    assert selectors.ladder_and_entry(slug="chess", player=alice) == (ladder, None)
    assert selectors.ladder_and_entry(slug="nowhere", player=alice) == (None, None)


def prepared_panel_statements():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%FROM ladder_ladder AS l%"]
        )
        return cursor.fetchone()[0]


def test_the_panel_statement_is_prepared_on_the_connection(reads):
    ladder = LadderFactory(slug="chess")
    alice = member(ladder, "alice")
    before = prepared_panel_statements()

    for _ in range(6):  # prepared after five runs on a connection (DATABASE_PREPARED_STATEMENTS)
        assert selectors.ladder_and_entry(slug="chess", player=alice) == (ladder, None)

    assert prepared_panel_statements() == (1 if reads == "sql" else before)
