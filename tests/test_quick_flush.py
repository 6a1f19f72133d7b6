"""The flush after a ``transaction=True`` test (tests/quick_flush.py) leaves the database as Django's would."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import TransactionTestCase
from django_celery_beat.models import PeriodicTask

from accounts.models import User
from tests import quick_flush
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def kept() -> tuple[set, set, set, set]:
    return (
        set(ContentType.objects.values_list("pk", "app_label", "model")),
        set(Permission.objects.values_list("pk", "codename")),
        set(Group.objects.values_list("name", flat=True)),
        set(PeriodicTask.objects.values_list("name", "enabled")),
    )


def flag() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT changed FROM {quick_flush.FLAG}")
        return cursor.fetchone()[0]


def flush() -> None:
    TransactionTestCase(methodName="__init__")._fixture_teardown()


def test_a_test_that_left_the_kept_tables_alone_empties_only_the_others():
    before = kept()
    UserFactory(username="alice").groups.add(Group.objects.get())
    assert not flag()

    flush()

    assert not User.objects.exists()
    assert kept() == before  # the same rows, ids and all: not deleted and made again


def test_a_test_that_changed_a_kept_table_gets_django_s_flush():
    names, tasks = kept()[2], kept()[3]
    Group.objects.create(name="extra")
    PeriodicTask.objects.update(enabled=False)
    assert flag()

    flush()

    assert not User.objects.exists()
    assert (kept()[2], kept()[3]) == (names, tasks)  # made again by post_migrate, as after migrate
    assert not flag()
