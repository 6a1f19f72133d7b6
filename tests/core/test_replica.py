"""core.replica's pins and routing rules, in process (the suite has no replica: tests/test_read_replica.py
runs the site against a real one)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.cache import SessionStore
from django.db import DEFAULT_DB_ALIAS, ProgrammingError, connections, transaction
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from django.urls import path
from django.utils import timezone

from accounts.models import User
from core import replica
from tests.factories import UserFactory

PIN = 15


@pytest.fixture(autouse=True)
def pin_seconds(settings):
    settings.DATABASE_REPLICA_PIN_SECONDS = PIN


def answered(request: HttpRequest, status: int) -> HttpResponse:
    """``request`` through ``ReplicaMiddleware`` to a view answering ``status``."""
    return replica.ReplicaMiddleware(lambda _: HttpResponse(status=status))(request)  # type: ignore[return-value]


def with_user(request: HttpRequest, user: User | None) -> HttpRequest:
    request.user = user or AnonymousUser()
    request.session = SessionStore()
    if user is not None:
        request.session[SESSION_KEY] = str(user.pk)
    return request


@pytest.mark.django_db
def test_a_browser_that_wrote_is_pinned_by_a_signed_cookie_for_the_pin_time():
    factory = RequestFactory()

    response = answered(with_user(factory.post("/ladders/x/join/"), None), 302)

    pin = response.cookies[replica.PIN_COOKIE]
    assert (pin["max-age"], pin["httponly"], pin["samesite"]) == (PIN, True, "Lax")
    reader = with_user(factory.get("/ladders/x/", HTTP_COOKIE=f"{replica.PIN_COOKIE}={pin.value}"), None)
    assert replica.pinned(reader)
    forged = with_user(factory.get("/ladders/x/", HTTP_COOKIE=f"{replica.PIN_COOKIE}=1:{pin.value[-20:]}"), None)
    assert not replica.pinned(forged)
    with time_machine.travel(timezone.now() + timedelta(seconds=PIN + 1)):
        assert not replica.pinned(reader)
    assert not replica.pinned(with_user(factory.get("/ladders/x/"), None))


@pytest.mark.django_db
@pytest.mark.parametrize("status", [400, 403, 409, 500])
def test_a_refused_write_and_a_read_pin_nobody(status):
    factory = RequestFactory()
    user = UserFactory(username=f"refused-{status}")

    refused = answered(with_user(factory.post("/api/v1/ladders/x/membership/"), user), status)
    read = answered(with_user(factory.get("/api/v1/ladders/x/"), user), 200)

    assert replica.PIN_COOKIE not in refused.cookies and replica.PIN_COOKIE not in read.cookies
    assert not replica.pinned(with_user(factory.get("/api/v1/ladders/x/"), user))


@pytest.mark.django_db
def test_an_api_client_that_wrote_is_pinned_by_its_credential_and_its_account():
    factory = RequestFactory()
    bot, other = UserFactory(username="pinned-bot"), UserFactory(username="other-bot")
    token = "Bearer lad_" + "a" * 40
    write = with_user(factory.post("/api/v1/matches/", HTTP_AUTHORIZATION=token), None)
    write.user = bot  # as DRF sets it once the token authenticates

    response = answered(write, 201)

    assert replica.PIN_COOKIE not in response.cookies  # a bot keeps no cookies: the cache holds its pin
    assert replica.pinned(with_user(factory.get("/api/v1/ladders/x/", HTTP_AUTHORIZATION=token), None))
    assert replica.pinned(with_user(factory.get("/ladders/x/"), bot))  # the account, signed in elsewhere
    other_token = factory.get("/api/v1/ladders/x/", HTTP_AUTHORIZATION="Bearer lad_" + "b" * 40)
    assert not replica.pinned(with_user(other_token, None))
    assert not replica.pinned(with_user(factory.get("/ladders/x/"), other))


def test_writes_and_migrations_go_to_the_primary_and_reads_outside_an_opted_in_request_too():
    router = replica.ReplicaRouter()

    assert router.db_for_write(User) == DEFAULT_DB_ALIAS
    assert router.db_for_read(User) == DEFAULT_DB_ALIAS
    assert replica.read_alias() == DEFAULT_DB_ALIAS
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "accounts") is True
    assert router.allow_migrate(replica.REPLICA, "accounts") is False


@pytest.mark.django_db
def test_an_opted_in_read_inside_a_transaction_reads_the_primary():
    factory = RequestFactory()
    seen: list[object] = []

    def view(request: HttpRequest) -> HttpResponse:
        seen.append(replica._scope.get() is not None)  # the replica is open to this request's reads…
        with transaction.atomic():  # …but not in a transaction: what it reads may decide what it writes
            seen.append(replica.read_alias())
        return HttpResponse()

    middleware = replica.ReplicaMiddleware(lambda request: view(request))
    request = with_user(factory.get("/ladders/x/"), None)
    middleware.process_view(request, replica.replica_reads(view), (), {})
    middleware(request)

    assert seen == [True, DEFAULT_DB_ALIAS]
    assert replica._scope.get() is None  # the request over, nothing is left open


@pytest.mark.django_db
def test_the_replica_is_not_opened_to_a_write_a_pinned_client_or_an_unmarked_view():
    factory = RequestFactory()
    middleware = replica.ReplicaMiddleware(lambda request: HttpResponse())
    marked = replica.replica_reads(lambda request: HttpResponse())
    pinned = answered(with_user(factory.post("/ladders/x/join/"), None), 302).cookies[replica.PIN_COOKIE].value
    requests = [
        (with_user(factory.post("/ladders/x/"), None), marked),
        (with_user(factory.get("/ladders/x/", HTTP_COOKIE=f"{replica.PIN_COOKIE}={pinned}"), None), marked),
        (with_user(factory.get("/ladders/x/"), None), lambda request: HttpResponse()),
    ]

    for request, view in requests:
        middleware.process_view(request, view, (), {})
        assert replica._scope.get() is None, request

    middleware.process_view(with_user(factory.head("/ladders/x/"), None), marked, (), {})
    assert replica._scope.get() is not None  # a HEAD is a read
    middleware(with_user(factory.head("/ladders/x/"), None))
    assert replica._scope.get() is None


def test_only_views_marked_for_the_replica_are_opted_in():
    class Page:
        replica_reads = True

    def plain(request: HttpRequest) -> HttpResponse:
        return HttpResponse()

    def class_view(request: HttpRequest) -> HttpResponse:
        return HttpResponse()

    class_view.view_class = Page  # type: ignore[attr-defined]  # as View.as_view() sets it

    assert replica._opted_in(class_view)
    assert not replica._opted_in(plain)
    assert replica._opted_in(replica.replica_reads(plain))


# A view that reads on whatever database the request was given, and kills its connection the
# first time that is the replica: a replica that fails under a request, mid-way.
runs: list[str] = []


@replica.replica_reads
def reading_view(request: HttpRequest) -> HttpResponse:
    alias = replica.read_alias()
    runs.append(alias)
    with connections[alias].cursor() as cursor:
        if alias == replica.REPLICA:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        cursor.execute("SELECT count(*) FROM accounts_user")
        (count,) = cursor.fetchone()
    return HttpResponse(f"{alias} {count}")


@replica.replica_reads
def failing_view(request: HttpRequest) -> HttpResponse:
    runs.append(replica.read_alias())
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table")
    return HttpResponse()


urlpatterns = [path("reading/", reading_view), path("failing/", failing_view)]


@pytest.fixture
def replica_alias(settings) -> Iterator[None]:
    """A second connection to the test database under the alias ``replica``, taken as a streaming
    standby (its health as a check would find a real one), and the middleware in place."""
    # A new connection of the test database's (the test may use it), found under the replica's alias.
    connections[replica.REPLICA] = connections.create_connection(DEFAULT_DB_ALIAS)
    settings.ROOT_URLCONF = __name__
    settings.MIDDLEWARE = [*settings.MIDDLEWARE[:-1], "core.replica.ReplicaMiddleware", settings.MIDDLEWARE[-1]]
    settings.DATABASE_REPLICA_CHECK_SECONDS = 60
    before = replica._Process.health
    replica._Process.health = replica.Health(usable=True, state="streaming", checked_at=time.monotonic())
    runs.clear()
    try:
        yield
    finally:
        replica._Process.health = before
        connections[replica.REPLICA].close()
        del connections[replica.REPLICA]


@pytest.mark.django_db(transaction=True)
def test_a_read_the_replica_fails_under_is_read_again_from_the_primary(replica_alias):
    UserFactory(username="counted")

    response = Client().get("/reading/")

    assert response.status_code == 200
    assert response.text == "default 1"
    assert runs == [replica.REPLICA, DEFAULT_DB_ALIAS]


@pytest.mark.django_db(transaction=True)
def test_an_error_of_the_primary_is_not_run_again(replica_alias):
    with pytest.raises(ProgrammingError):
        Client().get("/failing/")

    assert runs == [replica.REPLICA]
