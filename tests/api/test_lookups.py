"""The hand-written look-ups of the API's hot paths agree with the ORM and with Django's permissions."""

from __future__ import annotations

import pytest
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.test import override_settings

from api.models import IdempotencyKey
from api.services import token_create, token_hash, token_revoke
from api.store import ladder_by_slug, live_token, report_rows, users_by_username
from core import db
from ladder.fields.answers import ladder_fields
from ladder.models import MatchField
from tests.api.conftest import report_body
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]


def _permission(codename: str) -> Permission:
    return Permission.objects.get(content_type__app_label="ladder", codename=codename)


def _key(user) -> str:
    _, secret = token_create(user=user, name="t")
    return token_hash(secret)


def test_live_token_reads_the_permissions_modelbackend_would(sql_or_orm):
    direct = UserFactory(username="direct")
    direct.user_permissions.add(_permission("trusted_reporter"))
    grouped = UserFactory(username="grouped")
    grouped.groups.add(Group.objects.get(name="moderators"))
    both = UserFactory(username="both")
    both.user_permissions.add(_permission("trusted_reporter"))
    both.groups.add(Group.objects.get(name="moderators"))
    plain = UserFactory(username="plain")
    for user in (direct, grouped, both, plain):
        token = live_token(_key(user))
        assert token is not None and token.user.pk == user.pk
        fresh = type(user).objects.get(pk=user.pk)
        assert token.user.get_all_permissions() == ModelBackend().get_all_permissions(fresh)
        assert token.user.has_perm("ladder.change_match") == (user in (grouped, both))
        assert token.user.has_perm("ladder.trusted_reporter") == (user in (direct, both))
    assert live_token(_key(plain)).user.get_all_permissions() == set()


def test_live_token_permissions_cost_no_query(moderator, django_assert_num_queries):
    token = live_token(_key(moderator))
    with django_assert_num_queries(0):
        assert token.user.has_perm("ladder.change_match")
        assert not token.user.has_perm("ladder.trusted_reporter")


def test_a_superuser_keeps_every_permission(root):
    user = live_token(_key(root)).user
    assert user.has_perm("ladder.trusted_reporter")
    assert user.get_all_permissions() == ModelBackend().get_all_permissions(type(root).objects.get(pk=root.pk))


def test_live_token_refuses_revoked_tokens_and_inactive_users(sql_or_orm, player, opponent):
    token, secret = token_create(user=player, name="t")
    assert live_token(token_hash(secret)) is not None
    token_revoke(user=player, token_id=token.pk)
    assert live_token(token_hash(secret)) is None
    key = _key(opponent)
    opponent.is_active = False
    opponent.save()
    assert live_token(key) is None
    assert live_token("0" * 64) is None


class TrustsBots(ModelBackend):
    """A ``ModelBackend`` that finds permissions its own way: every bot is a trusted reporter."""

    def get_user_permissions(self, user_obj, obj=None):
        found = super().get_user_permissions(user_obj, obj)
        return found | {"ladder.trusted_reporter"} if user_obj.is_bot else found


@override_settings(AUTHENTICATION_BACKENDS=[BACKENDS[0], "tests.api.test_lookups.TrustsBots"])
def test_a_modelbackend_that_finds_permissions_its_own_way_is_asked(client_for, ladder, player, opponent):
    server = UserFactory(username="any_bot", is_bot=True)  # no ladder lists it: only the backend trusts it
    response = client_for(server).post("/api/v1/matches/", report_body(ladder), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["confirmation"] == "trusted"


def test_users_by_username_in_any_case(sql_or_orm):
    capitalised, underscored = UserFactory(username="Alice"), UserFactory(username="bob_2")
    found = users_by_username(["ALICE", "alice", "Bob_2", "nobody"])
    assert found == {"alice": capitalised, "bob_2": underscored}
    assert found["alice"].username == "Alice" and found["alice"].pk == capitalised.pk
    assert users_by_username([]) == {}


def test_ladder_by_slug(sql_or_orm, ladder):
    found = ladder_by_slug(ladder.slug)
    assert found == ladder
    assert [getattr(found, f.attname) for f in type(ladder)._meta.concrete_fields] == [
        getattr(ladder, f.attname) for f in type(ladder)._meta.concrete_fields
    ]
    assert ladder_by_slug("no-such-ladder") is None


def test_report_rows_are_the_ladder_and_the_users_in_one_statement(sql_or_orm, ladder, django_assert_num_queries):
    capitalised = UserFactory(username="Alice")
    with django_assert_num_queries(1 if sql_or_orm == "sql" else 2):
        found, users = report_rows(ladder.slug, ["ALICE", "alice", "nobody"])
    assert found == ladder and users == {"alice": capitalised}
    concrete = type(ladder)._meta.concrete_fields
    assert [getattr(found, f.attname) for f in concrete] == [getattr(ladder, f.attname) for f in concrete]
    user_fields = type(capitalised)._meta.concrete_fields
    assert [getattr(users["alice"], f.attname) for f in user_fields] == [
        getattr(capitalised, f.attname) for f in user_fields
    ]
    with django_assert_num_queries(0):
        assert ladder_fields(found) == []  # known to have no match fields, as ``ladder_by_slug`` says
    assert report_rows("no-such-ladder", ["alice"]) == (None, {"alice": capitalised})
    assert report_rows(ladder.slug, []) == (ladder, {})
    MatchField.objects.create(ladder=ladder, name="map", label="Map", kind="text", position=1)
    with_one, _ = report_rows(ladder.slug, [])
    assert [field.name for field in ladder_fields(with_one)] == ["map"]


def test_a_ladder_looked_up_without_match_fields_reads_none(sql_or_orm, ladder, django_assert_num_queries):
    bare = ladder_by_slug(ladder.slug)
    with django_assert_num_queries(0):
        assert ladder_fields(bare) == []

    MatchField.objects.create(ladder=ladder, name="map", label="Map", kind="text", position=1)
    with_one = ladder_by_slug(ladder.slug)
    with django_assert_num_queries(1):
        assert [field.name for field in ladder_fields(with_one)] == ["map"]
    assert [field.name for field in ladder_fields(ladder)] == ["map"]  # a ladder read elsewhere: always asked


def test_a_model_needing_a_converter_is_refused():
    with pytest.raises(TypeError, match="response_body"):
        db.column_list(IdempotencyKey, "k")
