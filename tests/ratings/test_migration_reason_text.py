"""Migration ratings 0011 drops the outside citation from queue-timeout adjustments made before it."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from ratings.services import QUEUE_TIMEOUT_REASON

MIGRATION = importlib.import_module("ratings.migrations.0011_queue_timeout_reason_text")
# What the queue wrote before: the reason, then a bracketed section of an outside document.
OLD = QUEUE_TIMEOUT_REASON.removesuffix(".") + " (DOCS §6)."


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)


def _latest():
    """Every app's last migration: going back to 0010 also unapplied the later ones and their dependents."""
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def test_the_new_reason_is_the_one_the_queue_writes_now():
    assert MIGRATION.NEW == QUEUE_TIMEOUT_REASON


@pytest.mark.django_db(transaction=True)
def test_old_reasons_are_rewritten_and_others_are_left_alone(ladder, player):
    from ratings.models import RatingAdjustment

    timed_out = RatingAdjustment.objects.create(ladder=ladder, player=player, reason=OLD, rating_delta=0)
    other = RatingAdjustment.objects.create(ladder=ladder, player=player, reason="Cheating (DOCS §6).", rating_delta=5)
    try:
        _migrate([("ratings", "0010_rating_settings")])
        _migrate([("ratings", "0011_queue_timeout_reason_text")])
        timed_out.refresh_from_db(fields=["reason"])  # the model's later fields are not in this schema
        other.refresh_from_db(fields=["reason"])
        assert timed_out.reason == QUEUE_TIMEOUT_REASON
        assert other.reason == "Cheating (DOCS §6)."
    finally:
        _migrate(_latest())


@pytest.mark.django_db(transaction=True)
def test_the_database_is_left_at_every_apps_last_migration():
    """Runs after the test above (file order): later tests need the tables of later migrations."""
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(_latest()) == []
