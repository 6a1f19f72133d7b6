"""Shared fixtures: a fixed cast of users and a ladder, on the real PostgreSQL and Redis.

The cast, used by every test module: `ladder`, `player` and `opponent` (members of it),
`outsider`, `moderator`, `root`, `bot` and `trusted`. `player_client`, `outsider_client`,
`moderator_client` and `root_client` are the test client signed in as one of them; `api` is
an anonymous API client and `client_for(user)` one with a token. Each fixture's docstring
says who they are.

The suite refuses to run a test that uses the database on anything else: a silent fall-back
to SQLite or an in-memory cache would hide exactly the bugs (locking, constraints, shared
throttles) it is for. A run whose tests need no database (the rating engines') needs
neither server. Under pytest-xdist each worker has a database of its own (pytest-django
names it ``test_<name>_gw<n>``), copied from one migrated once per run
(``tests/database_template.py``), and Redis databases of its own (``_worker_redis``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from django.core.cache import cache
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from api.services import token_create
from tests.factories import LadderFactory, UserFactory, member, moderator_account

# CI runs the same examples every time (a red build should mean a regression, not luck);
# `HYPOTHESIS_PROFILE=thorough` explores ten times more widely on a developer's machine.
hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, max_examples=300)
hypothesis_settings.register_profile("dev", deadline=None, max_examples=300)
hypothesis_settings.register_profile("thorough", deadline=None, max_examples=3000)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


# A test uses the database when it is marked ``django_db`` or asks for one of these fixtures,
# itself or through another (the cast's fixtures ask for ``db``).
DATABASE_FIXTURES = frozenset(
    {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}
)


# Modules whose tests start programs of their own that run alongside them (gunicorn and nginx,
# Celery workers and beat, ``manage.py serve``, a redis-server, bots, schemathesis, the API client
# generator, a second Django process): marked ``external``, with the benchmarks (``bench``), and
# left out of ``make test-fast``.
EXTERNAL_MODULES = frozenset(
    {
        "tests/api/test_bot.py",
        "tests/api/test_schema_clients.py",
        "tests/api/test_schemathesis.py",
        "tests/matchmaking/test_one_game_concurrency.py",
        "tests/test_celery_worker.py",
        "tests/test_delivery_workers.py",
        "tests/test_gunicorn_config.py",
        "tests/test_read_replica.py",
        "tests/test_redis_outage.py",
        "tests/test_replay_worker.py",
        "tests/test_scale_out.py",
        "tests/test_serve.py",
    }
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "ladder(**fields): the cast's `ladder` with these fields instead of the defaults"
    )
    # Django's advice for a test run: a fast hasher. The site's (PBKDF2, a million rounds) made
    # each login attempt of the lockout tests cost a third of a second of CPU; what the tests
    # check (who may sign in, what counts towards a lockout) is the same with any hasher.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # The suite's moderators and administrators act without a second factor, so each test of a
    # moderator's power tests that power. tests/accounts/test_two_factor.py and the browser
    # test turn the requirement back on and check that it holds everywhere.
    settings.TWO_FACTOR_FOR_STAFF = False
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        _require_services()  # pytest-xdist's controller: the workers' tests are not known here
    _worker_redis()


def _worker_redis() -> None:
    """Gives a pytest-xdist worker Redis databases of its own, before anything has connected.

    Worker ``gw<n>`` uses the broker's and the cache's database numbers plus ``n`` times
    their span (broker 0 and cache 1: ``gw0`` 0 and 1, ``gw1`` 2 and 3), so no worker's
    ``cache.clear()`` or queue reaches another's. Subprocesses started by a test inherit
    them through the environment.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or worker == "gw0":
        return
    index = int(worker.removeprefix("gw"))
    urls = {"CELERY_BROKER_URL": settings.CELERY_BROKER_URL}
    if settings.CACHES["default"].get("LOCATION", "").startswith("redis://"):
        urls["CACHE_URL"] = settings.CACHES["default"]["LOCATION"]
    urls = {name: url for name, url in urls.items() if url.startswith("redis://")}
    numbers = {name: int(urlsplit(url).path.strip("/") or 0) for name, url in urls.items()}
    if not numbers:
        return
    span = max(numbers.values()) - min(numbers.values()) + 1
    for name, url in urls.items():
        moved = urlunsplit(urlsplit(url)._replace(path=f"/{numbers[name] + index * span}"))
        os.environ[name] = moved
        if name == "CELERY_BROKER_URL":
            settings.CELERY_BROKER_URL = moved
        else:
            settings.CACHES["default"]["LOCATION"] = moved


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Iterator[None]:
    """Marks the ``external`` tests before ``-m`` selects, and once every other hook has run (and
    pytest-django has put the tests that need no database last), orders the run:

    - The tests that need no database first: pytest-xdist's first worker starts on them, over a
      minute of the engines and the embedded default, while the other migrates the template
      database (15–20 s on a fresh server), where it would have waited on the lock.
    - Then the modules that use it, each kept whole, with the browser's and the external ones
      spread evenly among the others. Those wait much of their time (on Chromium, on a program
      they started, on a timeout they test); all together at the end, as pytest-django orders
      them, they left both cores idle a tenth of the time, and among the others a worker's wait
      is the other worker's core.
    """
    for item in items:
        if item.nodeid.split("::")[0] in EXTERNAL_MODULES or item.get_closest_marker("bench"):
            item.add_marker(pytest.mark.external)
    yield
    items[:] = [item for item in items if not _uses_database(item)] + _spread_waiting_modules(
        [item for item in items if _uses_database(item)]
    )


def _spread_waiting_modules(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` by module, the order within each kept, with the modules of each kind (browser,
    external, the others) placed at even intervals through the run."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    kinds: dict[str, list[list[pytest.Item]]] = {}
    for tests in modules.values():
        kind = next((mark for mark in ("external", "browser") if tests[0].get_closest_marker(mark)), "other")
        kinds.setdefault(kind, []).append(tests)
    placed = [((number + 0.5) / len(blocks), tests) for blocks in kinds.values() for number, tests in enumerate(blocks)]
    placed.sort(key=lambda place: place[0])
    return [item for _, tests in placed for item in tests]


def _uses_database(item: pytest.Item) -> bool:
    return item.get_closest_marker("django_db") is not None or not DATABASE_FIXTURES.isdisjoint(
        getattr(item, "fixturenames", ())
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Refuses a run with a test that uses the database unless PostgreSQL and Redis are set up."""
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: its controller has checked
    if any(_uses_database(item) for item in session.items):
        _require_services()


def _require_services() -> None:
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


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """Each worker's test database is a copy of one migrated once per run (tests/database_template.py)."""
    from tests.database_template import migrated_template

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.postgresql":
        database.setdefault("TEST", {})["TEMPLATE"] = migrated_template(database)


@pytest.fixture(scope="session")
def embedded_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """embedded_database: a SQLite file of the embedded default (``make run``), every migration
    applied, made once per run (tests/database_template.py). A test that runs the site on SQLite in
    a fresh process copies it into that process's ``LADDER_VAR_DIR`` as ``db.sqlite3``."""
    from tests.database_template import migrated_sqlite

    here = tmp_path_factory.getbasetemp()
    # Under pytest-xdist each worker's folder is popen-gw<n> in the run's own folder.
    return migrated_sqlite(here.parent if os.environ.get("PYTEST_XDIST_WORKER") else here)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """The test database flushes after a test with ``transaction=True`` without making its content
    types, permissions, groups and periodic tasks again unless the test changed them
    (``tests/quick_flush.py``).

    With ``TEST_DATABASE_POOLER=host:port`` (``make test-pgbouncer``), the tests reach their
    database through that pooler once it is made: PostgreSQL makes and drops test databases
    directly, which a pooler holding server connections to the template would make fail."""
    from tests import quick_flush

    quick_flush.enable()
    with django_db_blocker.unblock():
        quick_flush.install()
    pooler = os.environ.get("TEST_DATABASE_POOLER")
    if not pooler:
        yield
        return
    from django.db import connections

    database = settings.DATABASES["default"]
    direct = database["HOST"], database["PORT"]
    host, _, port = pooler.rpartition(":")
    with django_db_blocker.unblock():
        connections["default"].close()
        for where in (database, connections["default"].settings_dict):
            where["HOST"], where["PORT"] = host, port
    yield
    with django_db_blocker.unblock():
        connections["default"].close()
        for where in (database, connections["default"].settings_dict):
            where["HOST"], where["PORT"] = direct
        # The pooler's server connections to the test database would keep Django from dropping it.
        with connections["default"].cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                [database["NAME"]],
            )


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


# The cast. Usernames stay fixed, so a test may assert them in a page or an answer.
# A module that needs someone else builds them with tests/factories.py under a name that
# says who they are (`bystander`, `newcomer`), never another "alice".


@pytest.fixture
def ladder(request: pytest.FixtureRequest, db):
    """ladder: "Chess" at /ladders/chess/, 1 v 1, default settings, fair-play limits off.

    A module or test that needs other settings says so with ``@pytest.mark.ladder(allow_draws=False)``.
    """
    fields = {"name": "Chess", "slug": "chess"}
    for marker in reversed(list(request.node.iter_markers("ladder"))):
        fields.update(marker.kwargs)
    return LadderFactory(**fields)


@pytest.fixture
def player(ladder):
    """player: alice, who signed up and joined `ladder` 1,000 days ago; the ladder's initial rating."""
    return member(ladder, "alice")


@pytest.fixture
def opponent(ladder):
    """opponent: bob, a member of `ladder` like `player`, whom `player` plays."""
    return member(ladder, "bob")


@pytest.fixture
def outsider(db):
    """outsider: mallory, a signed-up user who is a member of no ladder and plays in no match."""
    return UserFactory(username="mallory")


@pytest.fixture
def moderator(db):
    """moderator: mod, staff in the ``moderators`` group; a member of no ladder."""
    return moderator_account("mod")


@pytest.fixture
def moderator_anywhere(db):
    """moderator_anywhere: mod, a moderator by permission, for tests with ``transaction=True``.

    The flush between those tests empties the ``moderators`` group a migration made
    (``serialized_rollback`` would restore it, but clashes with the content types the flush re-creates).
    """
    user = UserFactory(username="mod", is_staff=True)
    user.user_permissions.add(Permission.objects.get(content_type__app_label="ladder", codename="change_match"))
    return type(user).objects.get(pk=user.pk)


@pytest.fixture
def root(db):
    """root: a superuser, who may do everything in the admin."""
    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def bot(ladder):
    """bot: robo, a bot account that is a member of `ladder` and plays through the API."""
    return member(ladder, "robo", is_bot=True)


@pytest.fixture
def trusted(ladder):
    """trusted: gameserver, a bot account trusted to report `ladder`'s games it does not play in."""
    server = UserFactory(username="gameserver", is_bot=True)
    ladder.trusted_reporters.add(server)
    return server


@pytest.fixture
def player_client(client, player):
    """player_client: the test ``client``, signed in as `player`."""
    client.force_login(player)
    return client


@pytest.fixture
def outsider_client(client, outsider):
    """outsider_client: the test ``client``, signed in as `outsider`."""
    client.force_login(outsider)
    return client


@pytest.fixture
def moderator_client(client, moderator):
    """moderator_client: the test ``client``, signed in as `moderator`."""
    client.force_login(moderator)
    return client


@pytest.fixture
def root_client(client, root):
    """root_client: the test ``client``, signed in as `root`."""
    client.force_login(root)
    return client


@pytest.fixture
def api() -> APIClient:
    """api: an anonymous API client."""
    return APIClient()


@pytest.fixture
def client_for() -> Callable[..., APIClient]:
    """client_for(user): an API client that sends a new token of ``user`` (read-only if asked)."""

    def make(user, *, read_only: bool = False, keyword: str = "Bearer") -> APIClient:
        _, secret = token_create(user=user, name="test", read_only=read_only)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"{keyword} {secret}")
        return client

    return make


@pytest.fixture(params=["sql", "orm"])
def sql_or_orm(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs a test twice: through the hand-written statements PostgreSQL runs (``sql``), and
    through their ORM twins, which other databases run (``orm``, under ``core.db.orm_twins()``)."""
    from core import db

    if request.param == "orm":
        with db.orm_twins():
            yield request.param
    else:
        yield request.param


@pytest.fixture(params=["two statements", "ORM"])
def report_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test through both ways ``match_report`` writes on PostgreSQL.

    The two-statement path (``ladder.matches.sql``) is what PostgreSQL uses; the ORM path is what
    other databases use, so it is checked here too (``core.db``'s switch off: every ORM
    twin runs, the rating store's and the replay's included).
    """
    from core import db

    monkeypatch.setattr(db, "_orm_forced", request.param == "ORM")
    return request.param


class Inbox:
    """What the test SMTP server received: ``messages`` (parsed), ``recipients`` (each one's envelope).

    A test makes the server refuse recipients by putting replies in ``refusals``.
    """

    def __init__(self) -> None:
        import threading

        self.messages: list[EmailMessage] = []
        self.recipients: list[list[str]] = []
        self.refusals: list[str] = []  # replies ("451 try later") to the next RCPT TO commands, one each
        self._arrived = threading.Condition()

    async def handle_RCPT(
        self, server: object, session: object, envelope: Any, address: str, options: list[str]
    ) -> str:
        if self.refusals:
            return self.refusals.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:  # aiosmtpd's handler hook
        import email
        import email.policy

        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=email.policy.default)
        with self._arrived:
            self.messages.append(message)  # policy.default parses to EmailMessage
            self.recipients.append(list(envelope.rcpt_tos))
            self._arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_for(self, count: int, timeout: float = 5.0) -> list[EmailMessage]:
        """The first ``count`` mails, waiting up to ``timeout`` seconds for them to arrive."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.messages) >= count, timeout):
                raise AssertionError(f"expected {count} mails within {timeout} s; {len(self.messages)} arrived")
            return self.messages[:count]


@pytest.fixture
def smtp_server(settings, celery_eager) -> Iterator[Inbox]:
    """smtp_server: a real SMTP server (aiosmtpd) on loopback, which the site's mail goes to.

    Celery runs eagerly, so a mail queued on commit is sent when the commit's callbacks run:
    in a test inside a transaction, wrap the request in
    ``django_capture_on_commit_callbacks(execute=True)``. Yields the ``Inbox``.
    """
    import logging
    import socket

    from aiosmtpd.controller import Controller

    with socket.socket() as probe:  # aiosmtpd checks the server by connecting, so it needs a real port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd logs every SMTP command
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    yield inbox
    controller.stop()


def _live_server_without_nagle() -> None:
    """The live server answers at once: its socket sends each write without waiting (TCP_NODELAY).

    Django's test server (wsgiref) writes a response's headers and its body separately; with
    Nagle's algorithm the body then waits for the client to acknowledge the headers, which a
    client delays by up to 40 ms. Every page, fragment and API call of the browser tests and
    schemathesis paid it.
    """
    import socket

    from django.core.servers.basehttp import ThreadedWSGIServer
    from django.test.testcases import LiveServerThread

    class Server(ThreadedWSGIServer):
        def get_request(self) -> tuple[socket.socket, Any]:
            connection, address = super().get_request()
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return connection, address

    LiveServerThread.server_class = Server


_live_server_without_nagle()
