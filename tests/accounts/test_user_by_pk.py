"""``User.objects.get(pk=<int>)``, the signed-in request's user, as one prepared statement on PostgreSQL."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import User
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def fields(user: User) -> dict[str, object]:
    return {field.attname: getattr(user, field.attname) for field in User._meta.concrete_fields}


def test_it_reads_every_field_as_the_orm_does():
    user = UserFactory(username="Ann_1", email="a@example.org", email_verified="A@example.org", about="Hi ✓")
    user.last_login = timezone.now()
    user.is_bot = True
    user.save()
    user.groups.add(Group.objects.create(name="testers"))

    fast = User.objects.get(pk=user.pk)
    orm = User.objects.filter(pk=user.pk).get()

    assert connection.vendor == "postgresql"
    assert fields(fast) == fields(orm)
    assert type(fast) is User and not fast._state.adding and fast._state.db == "default"
    assert list(fast.groups.values_list("name", flat=True)) == ["testers"]  # a saved instance, as the ORM's


def test_a_missing_user_raises_does_not_exist():
    with pytest.raises(User.DoesNotExist):
        User.objects.get(pk=987654321)


def test_other_lookups_still_go_through_the_orm():
    user = UserFactory(username="bob")

    assert User.objects.get(pk=str(user.pk)) == user
    assert User.objects.get(username="bob") == user
    assert User.objects.get(pk=user.pk, is_active=True) == user
    with pytest.raises(User.DoesNotExist):
        User.objects.get(pk=user.pk, is_active=False)


def test_a_signed_in_page_loads_its_user_through_it(client):
    user = UserFactory(username="cid")
    client.force_login(user)

    with CaptureQueriesContext(connection) as queries:
        response = client.get("/accounts/settings/")

    assert response.status_code == 200 and response.wsgi_request.user == user
    assert any(" FROM accounts_user AS u WHERE u.id = " in query["sql"] for query in queries.captured_queries)
