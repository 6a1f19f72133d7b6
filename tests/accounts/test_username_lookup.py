"""Case-insensitive username look-ups use the index on lower(username)."""

from __future__ import annotations

import pytest
from django.db import connection

from accounts.models import User
from ladder.models import Participant
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_iexact_finds_any_case_through_the_index():
    alice = UserFactory(username="Alice")
    UserFactory(username="alicia")
    assert list(User.objects.filter(username__iexact="aLICE")) == [alice]
    assert User.objects.get_by_natural_key("ALICE") == alice
    assert "accounts_user_username_ci_unique" in plan(User.objects.filter(username__iexact="alice"))


def test_iexact_across_a_relation_uses_the_index_too():
    assert "accounts_user_username_ci_unique" in plan(Participant.objects.filter(player__username__iexact="alice"))
