"""Shared fixtures: a fixed cast of users and a ladder, on the real PostgreSQL and Redis.

The suite refuses to run on anything else: a silent fall-back to SQLite or an in-memory
cache would hide exactly the bugs (locking, constraints, shared throttles) it is for.
"""

from __future__ import annotations

import os

import pytest
from django.conf import settings
from django.core.cache import cache
from hypothesis import settings as hypothesis_settings

from tests.factories import LadderFactory, UserFactory

# CI runs the same examples every time (a red build should mean a regression, not luck);
# `HYPOTHESIS_PROFILE=thorough` explores ten times more widely on a developer's machine.
hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, max_examples=300)
hypothesis_settings.register_profile("dev", deadline=None, max_examples=300)
hypothesis_settings.register_profile("thorough", deadline=None, max_examples=3000)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_configure(config: pytest.Config) -> None:
    engine = settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        pytest.exit(
            "The tests need PostgreSQL: run `make test`, or set DATABASE_URL=postgres://... (see README).",
            returncode=3,
        )
    broker = settings.CELERY_BROKER_URL
    if not broker.startswith("redis://"):
        pytest.exit(
            "The tests need Redis: run `make test`, or set CELERY_BROKER_URL=redis://... (see README).",
            returncode=3,
        )
    import redis

    try:
        redis.Redis.from_url(broker, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.exit(f"The tests cannot reach Redis at {broker}: {exc}", returncode=3)


@pytest.fixture(autouse=True)
def _clear_cache() -> None:
    cache.clear()


@pytest.fixture
def celery_eager():
    """Run ``.delay()`` in-process, as the embedded default does (the suite has a real broker).

    Tasks enqueued on commit (a void's replay job) then run when the callbacks do:
    ``django_capture_on_commit_callbacks(execute=True)`` in a test inside a transaction.
    """
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def player(db):
    return UserFactory(username="alice")


@pytest.fixture
def opponent(db):
    return UserFactory(username="bob")


@pytest.fixture
def outsider(db):
    return UserFactory(username="mallory")


@pytest.fixture
def moderator(db):
    from django.contrib.auth.models import Group

    user = UserFactory(username="mod", is_staff=True)
    user.groups.add(Group.objects.get(name="moderators"))
    return user


@pytest.fixture
def moderator_anywhere(db):
    """A moderator by permission, for tests with ``transaction=True``: the flush between those
    tests empties the ``moderators`` group a migration made (``serialized_rollback`` would
    restore it, but clashes with the content types the flush re-creates)."""
    from django.contrib.auth.models import Permission

    user = UserFactory(username="mod", is_staff=True)
    user.user_permissions.add(Permission.objects.get(content_type__app_label="ladder", codename="change_match"))
    return type(user).objects.get(pk=user.pk)


@pytest.fixture
def ladder(db):
    return LadderFactory()


@pytest.fixture
def player_client(client, player):
    client.force_login(player)
    return client


@pytest.fixture(params=["two statements", "ORM"])
def report_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test through both ways ``match_report`` writes on PostgreSQL.

    The two-statement path (``ladder.services.report_sql``) is what PostgreSQL uses; the
    ORM path is what other databases use, so it is checked here too.
    """
    from ladder.services import matches

    monkeypatch.setattr(matches, "SINGLE_STATEMENT_REPORTS", request.param == "two statements")
    return request.param
