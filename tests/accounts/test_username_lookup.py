"""Case-insensitive username look-ups use the index on lower(username)."""

from __future__ import annotations

import pytest
from django.db import connection

from accounts.models import User
from ladder.models import Participant
from tests.factories import UserFactory, bulk_users

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def crowd():
    """A thousand other players, so the plans are those of a site in use."""
    return bulk_users("someone", 1000)


def plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        # Statistics of a site with players: on a near-empty table with stale statistics
        # the planner may price a full scan of the plain username index below the one on
        # lower(username), and the plan would say nothing about a real site.
        cursor.execute("ANALYZE accounts_user")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_iexact_finds_any_case_through_the_index():
    capitalised = UserFactory(username="Alice")
    UserFactory(username="alicia")
    assert list(User.objects.filter(username__iexact="aLICE")) == [capitalised]
    assert User.objects.get_by_natural_key("ALICE") == capitalised
    assert "accounts_user_username_ci_unique" in plan(User.objects.filter(username__iexact="alice"))


def test_iexact_across_a_relation_uses_the_index_too():
    assert "accounts_user_username_ci_unique" in plan(Participant.objects.filter(player__username__iexact="alice"))
