"""The site without Redis: down, stalled or restarted, on a throwaway Redis of the test's own.

The cache is pointed at a redis-server started for the test (never the shared one), which
the test then kills, stops (SIGSTOP) or restarts. Sessions must come from the database,
rate limits let requests through, and only what truly needs Redis (queuing a task) answers
503 with ``Retry-After``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import path, reverse
from rest_framework.test import APIClient

from api.services import token_create
from config.urls import urlpatterns as site_urlpatterns
from core import broker
from core import cache as cache_backend
from core.middleware import RETRY_AFTER_SECONDS
from ladder.tasks import run_nightly_task
from notifications.models import EmailMode, EmailPreference, EmailStatus, Kind, Notification
from notifications.tasks import send_notification_mails_task
from tests.factories import PASSWORD
from tests.ladder.test_conversation import pending_match

SETTINGS_PAGE = "/accounts/settings/"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A redis-server of the test's own, on a free port, with its data in ``directory``."""

    def __init__(self, directory: Path, *, persistent: bool = False) -> None:
        self.port = free_port()
        self.directory = directory
        self.persistent = persistent
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persistence],
            cwd=self.directory,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(self.url, socket_connect_timeout=0.5).ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        """Ends the server (SIGTERM: with persistence its data is on disk for ``start``)."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)
            self.process.terminate()
            self.process.wait(timeout=10)

    def stall(self) -> None:
        """Stops the process: connections are accepted by the kernel and never answered."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)


def cache_settings(url: str, **options: float) -> dict[str, dict[str, object]]:
    """The project's cache settings, its timeouts included, on ``url``."""
    default = settings.CACHES["default"]
    return {"default": {**default, "LOCATION": url, "OPTIONS": {**default.get("OPTIONS", {}), **options}}}


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        with override_settings(CACHES=cache_settings(server.url)):
            yield server
    finally:
        server.stop()


@pytest.fixture
def token(player) -> str:
    _, secret = token_create(user=player, name="bot", read_only=True)
    return secret


def test_site_works_with_redis_down(redis_server, client, player, ladder, token):
    signed_in = Client()
    signed_in.force_login(player)  # its session is in the database and in Redis
    bot = APIClient()
    bot.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    redis_server.stop()

    assert bot.get("/api/v1/ladders/").status_code == 200
    assert bot.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/").status_code == 200
    assert APIClient().get("/api/v1/ladders/").status_code == 200
    assert APIClient().get(f"/api/v1/ladders/{ladder.slug}/leaderboard/").status_code == 200
    assert client.get(reverse("ladder:detail", args=[ladder.slug])).status_code == 200
    page = signed_in.get(SETTINGS_PAGE)
    assert page.status_code == 200
    assert player.username in page.text

    login = client.post(reverse("accounts:login"), {"username": player.username, "password": PASSWORD})
    assert login.status_code == 302
    assert client.get(SETTINGS_PAGE).status_code == 200
    logout = client.post(reverse("accounts:logout"))
    assert logout.status_code == 302
    assert client.get(SETTINGS_PAGE).status_code == 302  # to the login page: the session is gone


def test_stalled_redis_costs_a_request_one_short_timeout(redis_server, client, player, ladder, token):
    client.force_login(player)
    bot = APIClient()
    bot.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert bot.get("/api/v1/ladders/").status_code == 200  # connected while Redis answered
    redis_server.stall()
    try:
        started = time.monotonic()
        page = client.get(SETTINGS_PAGE)
        api = bot.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/")
        elapsed = time.monotonic() - started
    finally:
        redis_server.resume()

    assert page.status_code == 200
    assert api.status_code == 200
    # A correctness bound, not a benchmark: Redis's own timeout is 5 s per call, and these
    # two requests make several cache calls.
    assert elapsed < 2, elapsed


@pytest.mark.parametrize("remembered", [cache_backend.DROPPED_KEYS_LIMIT, 0], ids=["its key", "every session"])
def test_logout_while_redis_is_down_stays_logged_out_when_it_returns(tmp_path, client, player, monkeypatch, remembered):
    """A logout deletes the session from the database; the copy in a Redis that was down
    (and comes back with its data) must not sign the session in again. The key is deleted
    when Redis answers, or, past the keys a process remembers, every cached session."""
    monkeypatch.setattr(cache_backend, "DROPPED_KEYS_LIMIT", remembered)
    server = RedisServer(tmp_path, persistent=True)
    server.start()
    try:
        with override_settings(CACHES=cache_settings(server.url, retry_seconds=0)):
            client.force_login(player)
            assert client.get(SETTINGS_PAGE).status_code == 200
            stolen = client.cookies[settings.SESSION_COOKIE_NAME].value
            server.stop()

            assert client.post(reverse("accounts:logout")).status_code == 302
            server.start()
            assert redis.Redis.from_url(server.url).dbsize() > 0  # the session came back with Redis
            replay = Client()
            replay.cookies[settings.SESSION_COOKIE_NAME] = stolen

            assert replay.get(SETTINGS_PAGE).status_code == 302
    finally:
        server.stop()


# A request that must queue a task, as the site's own do (voids and replays, enqueued once
# their transaction commits); under /api/ and on the site.
def queue_nightly(request: HttpRequest) -> HttpResponse:
    run_nightly_task.delay()
    return HttpResponse("queued", status=202)


urlpatterns = [
    path("api/v1/test-queue/", queue_nightly),
    path("test-queue/", queue_nightly),
    *site_urlpatterns,
]


@pytest.fixture
def broker_down() -> Iterator[None]:
    """Celery's broker at an address where nothing listens (connections are refused)."""
    from config.celery import app

    previous = app.conf.broker_url, app.conf.broker_write_url
    dead = f"redis://127.0.0.1:{free_port()}/0"

    def point_at(url: str, write_url: str | None) -> None:
        app.conf.broker_url, app.conf.broker_write_url = url, write_url
        app._pool = None  # the pools hold connections to the previous URL
        app.amqp._producer_pool = None

    point_at(dead, dead)
    try:
        yield
    finally:
        point_at(*previous)
        broker.breaker.reset()  # the failure left the broker alone for a few seconds


@override_settings(ROOT_URLCONF=__name__)
@pytest.mark.django_db
@pytest.mark.usefixtures("broker_down")
def test_queuing_a_task_with_the_broker_down_is_a_503_with_retry_after(player_client):
    api = player_client.post("/api/v1/test-queue/")
    page = player_client.post("/test-queue/")

    assert api.status_code == 503
    assert api.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert api.json()["error"]["code"] == "unavailable"
    assert page.status_code == 503
    assert page.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert "Briefly unavailable" in page.text
    assert "alice" in page.text  # the site's own page, signed in


@pytest.fixture
def stalled_broker(tmp_path: Path) -> Iterator[RedisServer]:
    """Celery's broker on a redis-server of the test's own, which the test may stall."""
    from config.celery import app

    server = RedisServer(tmp_path)
    server.start()
    previous = app.conf.broker_url, app.conf.broker_write_url

    def point_at(url: str, write_url: str | None) -> None:
        app.conf.broker_url, app.conf.broker_write_url = url, write_url
        app._pool = None
        app.amqp._producer_pool = None

    point_at(server.url, server.url)
    try:
        yield server
    finally:
        server.stop()
        point_at(*previous)
        broker.breaker.reset()


@pytest.mark.django_db
def test_a_stalled_broker_costs_a_request_one_short_timeout_and_the_sweep_does_the_work(
    stalled_broker, smtp_server, ladder, player, opponent, client, django_capture_on_commit_callbacks
):
    """A comment tells bob at once by mail: the request kicks the mail task on commit. With
    the broker stalled the kick fails fast, the comment is saved, and beat's sweep mails bob."""
    from config.celery import app

    app.conf.task_always_eager = False  # the smtp_server fixture runs tasks in-process; these must publish
    opponent.email_verified = opponent.email
    opponent.save(update_fields=["email_verified"])
    EmailPreference.objects.create(user=opponent, kind=Kind.COMMENTED, mode=EmailMode.INSTANT)
    match = pending_match(ladder, player, opponent)
    client.force_login(player)
    run_nightly_task.delay()  # connected while Redis answered
    stalled_broker.stall()
    answers, took = [], []
    try:
        for body in ("good game", "rematch tomorrow?"):
            started = time.monotonic()
            with django_capture_on_commit_callbacks(execute=True):
                answers.append(client.post(reverse("ladder:match_comment", args=[match.pk]), {"body": body}))
            took.append(time.monotonic() - started)
    finally:
        stalled_broker.resume()

    assert [answer.status_code for answer in answers] == [302, 302]
    # Bounds for correctness, not a benchmark (on a shared machine): Celery's own retries held
    # each request 8 s. The first request waits one broker timeout (0.5 s); the second does
    # not try the broker.
    assert took[0] < 3 and took[1] < 1.5, took
    rows = Notification.objects.filter(recipient=opponent, kind=Kind.COMMENTED)
    assert set(rows.values_list("email_status", flat=True)) == {EmailStatus.PENDING}
    assert smtp_server.messages == []

    app.conf.task_always_eager = True  # beat's run of the sweep, a minute later, on a worker
    with django_capture_on_commit_callbacks(execute=True):
        send_notification_mails_task.delay()

    assert len(smtp_server.wait_for(2)) == 2
    assert set(rows.values_list("email_status", flat=True)) == {EmailStatus.SENT}


@pytest.mark.django_db
def test_readiness_fails_naming_redis_while_it_is_down_and_passes_when_it_is_back(redis_server, settings):
    from django.utils import timezone
    from django_celery_beat.models import PeriodicTask

    from monitoring.models import WorkerHeartbeat

    settings.CELERY_BROKER_URL = redis_server.url  # the broker and the cache on the test's Redis
    WorkerHeartbeat.objects.create(hostname="celery@worker", seen_at=timezone.now())
    PeriodicTask.objects.update(last_run_at=timezone.now())
    assert Client().get("/readyz").status_code == 200

    redis_server.stop()
    started = time.monotonic()
    response = Client().get("/readyz")
    elapsed = time.monotonic() - started

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["redis"]["ok"] is False
    assert checks["redis"]["detail"] == (
        "the broker did not answer (ConnectionError); the cache did not answer (ConnectionError)"
    )
    assert [name for name, check in checks.items() if not check["ok"]] == ["redis"]
    assert elapsed < 2, elapsed  # refused at once; a stalled Redis costs at most two short timeouts

    redis_server.start()
    assert Client().get("/readyz").status_code == 200
