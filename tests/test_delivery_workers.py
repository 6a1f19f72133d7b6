"""A mail server that never answers holds only the mail worker: the site's tasks go on.

Real Celery workers, as ``make stack`` runs them (one on the site's queue, one on the mail
queue), on queues of the test's own on the suite's Redis. A mail is sent to an SMTP server
on loopback that accepts connections and never says a word, which holds the mail worker
until its timeout; the nightly job, queued just after it, must be done well before.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from config.celery import app
from core.tasks import send_mail_task
from ladder.models import NightlyRun
from ladder.standings.nightly import local_midnight
from ladder.tasks import run_ladder_nightly_task
from ratings.models import PlayerRating
from tests.factories import LadderFactory, bulk_users
from tests.test_celery_worker import celery, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
SMTP_TIMEOUT = 60  # how long the silent server holds the mail worker


@contextmanager
def silent_smtp_server() -> Iterator[int]:
    """A port that accepts connections and never answers (a hung mail server)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def worker(name: str, queues: str, base_queue: str, smtp_port: int, logs: Path) -> AbstractContextManager[object]:
    """A real worker on ``queues``, as ``make stack`` starts one, sending mail to ``smtp_port``."""
    smtp = {"EMAIL_URL": f"smtp://127.0.0.1:{smtp_port}/?timeout={SMTP_TIMEOUT}"}
    return celery("worker", base_queue, logs, queues=queues, name=name, env=smtp)


@pytest.fixture
def queue() -> Iterator[str]:
    """The test's own queues: its name for the site's tasks, and the deliveries' after it."""
    name = f"ladder-test-{uuid.uuid4().hex[:12]}"
    default = settings.CELERY_TASK_DEFAULT_QUEUE
    previous = app.conf.task_default_queue, app.conf.task_routes
    # The routes this process would have with CELERY_QUEUE=name, as the workers do.
    app.conf.task_default_queue = name
    app.conf.task_routes = {
        task: {"queue": route["queue"].replace(default, name, 1)} for task, route in settings.CELERY_TASK_ROUTES.items()
    }
    app.amqp.flush_routes()
    app.amqp.__dict__.pop("router", None)
    try:
        yield name
    finally:
        app.conf.task_default_queue, app.conf.task_routes = previous
        app.amqp.flush_routes()
        app.amqp.__dict__.pop("router", None)
        client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        client.delete(name, *client.keys(f"{name}*"))


def test_a_hung_mail_server_holds_only_the_mail_worker(queue, tmp_path):
    ladder = LadderFactory(name="Home", time_zone="UTC")
    now = timezone.now()
    for user in bulk_users("w-", 3):
        PlayerRating.objects.create(
            ladder=ladder, player=user, rating=1500, rd=80, volatility=0.06, rd_as_of=now - timedelta(days=9)
        )
    yesterday = local_midnight(ladder=ladder, at=now) - timedelta(days=1)
    received = "Task core.tasks.send_mail_task["  # a worker's log line for a task it took

    with (
        silent_smtp_server() as smtp_port,
        worker("site", queue, queue, smtp_port, tmp_path),
        worker("mail", f"{queue}.mail", queue, smtp_port, tmp_path),
    ):
        send_mail_task.delay(["bob@example.org"], "Hello", "A mail the server never takes.")
        mail_log = tmp_path / "mail.log"
        wait_for(lambda: received in mail_log.read_text(), "the mail worker takes the mail", tmp_path)
        started = time.monotonic()
        run_ladder_nightly_task.delay(ladder.pk, yesterday.isoformat())

        wait_for(lambda: NightlyRun.objects.filter(ladder=ladder).exists(), "the nightly job", tmp_path)
        took = time.monotonic() - started

    # With one worker for everything, the nightly job waited behind the mail for SMTP_TIMEOUT.
    assert took < SMTP_TIMEOUT / 2, took
    assert received not in (tmp_path / "site.log").read_text(), "the mail went to the mail worker alone"
