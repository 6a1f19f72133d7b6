"""``make run``'s server (``manage.py serve``): the periodic tasks run in it, and mails link to its port.

The server runs as ``make run`` starts it, a subprocess on the suite's test database with
no broker (tasks run eagerly, the embedded default) and mail going to the suite's real SMTP
server, on a port the system picks. The schedule is the one the migrations create, each
task every two seconds so the test takes seconds rather than an hour. The server is stopped
as Ctrl-C stops it: SIGINT to its whole process group.
"""

from __future__ import annotations

import http.cookiejar
import math
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from accounts.sync import SITE
from core.sync import site_sync
from matchmaking.models import EntryStatus
from tests.factories import LadderFactory, member, waiting

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
EVERY = 2  # seconds between two runs of each task in the test's copy of the schedule
WAIT_SECONDS = 60


def database_url() -> str:
    """The test database (``test_…``) as a URL for the server."""
    db = settings.DATABASES["default"]
    user = quote(db["USER"] or "", safe="")
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def the_migrations_schedule() -> dict[str, str]:
    """The periodic tasks every migrate makes (``accounts.sync``), by name: their task, every ``EVERY`` seconds."""
    site_sync(SITE)
    every, _ = IntervalSchedule.objects.get_or_create(every=EVERY, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.update(interval=every, crontab=None, last_run_at=None, total_run_count=0)
    return dict(PeriodicTask.objects.filter(enabled=True).values_list("name", "task"))


@contextmanager
def serve(smtp_port: int, log: Path) -> Iterator[subprocess.Popen]:
    """``manage.py serve 127.0.0.1:0`` as ``make run`` runs it; SIGINT to its group on the way out."""
    env = {key: value for key, value in os.environ.items() if key not in ("CELERY_BROKER_URL", "SITE_URL", "DEBUG")}
    env.update(
        DATABASE_URL=database_url(),
        DATABASE_CONN_MAX_AGE="0",
        CELERY_TASK_ALWAYS_EAGER="1",
        EMAIL_URL=f"smtp://127.0.0.1:{smtp_port}",
        PYTHONUNBUFFERED="1",
    )
    with log.open("wb") as out:
        # --noreload: files other people edit during the run must not restart the server mid-test.
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "127.0.0.1:0", "--noreload", "--skip-checks"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # Ctrl-C as a terminal delivers it: a suite started in the background by a shell
            # without job control inherits SIGINT ignored, and Python then never raises
            # KeyboardInterrupt, so the server would not stop.
            preexec_fn=_default_sigint,
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(condition: Callable[[], object], what: str, log: Path) -> object:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(0.2)
    pytest.fail(f"waited {WAIT_SECONDS} s for {what}\n--- server\n{log.read_text(errors='replace')[-6000:]}")


def served_origin(log: Path) -> str | None:
    found = re.search(r"Links in mails start with (http://127\.0\.0\.1:\d+)/", log.read_text(errors="replace"))
    return found.group(1) if found else None


def ask_for_a_password_reset(origin: str, email: str) -> None:
    """The form, then its POST with the CSRF cookie and token, as a browser sends them."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    url = origin + reverse("accounts:password_reset")
    page = opener.open(url, timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "email": email}).encode()
    with opener.open(urllib.request.Request(url, data=body), timeout=30) as answer:
        assert answer.url.endswith(reverse("accounts:password_reset_done"))


def test_make_runs_server_runs_every_periodic_task_and_mails_links_to_its_own_port(smtp_server, tmp_path):
    schedule = the_migrations_schedule()
    assert "matchmaking.tasks.sweep_queue_task" in schedule.values()
    ladder = LadderFactory()
    gone = waiting(ladder, member(ladder, "closed_tab"), timezone.now() - timedelta(minutes=5))
    player = member(ladder, "forgetful")
    log = tmp_path / "serve.log"

    started = time.monotonic()
    with serve(settings.EMAIL_PORT, log) as server:
        origin = wait_for(lambda: served_origin(log), "the server to bind", log)
        assert origin != "http://127.0.0.1:8000"

        # A mail sent by a request links to the port the request was served on.
        ask_for_a_password_reset(str(origin), player.email)
        text = smtp_server.wait_for(1, timeout=30)[0].get_body(preferencelist=("plain",)).get_content()
        assert re.search(r"https?://\S+", text).group(0).startswith(f"{origin}/accounts/password-reset/")

        # The queue sweep drops the search of a page that stopped polling.
        wait_for(lambda: type(gone).objects.get(pk=gone.pk).status == EntryStatus.LEFT, "the sweep", log)
        time.sleep(3 * EVERY)  # a second run of every task, with room for a busy machine
        os.killpg(server.pid, signal.SIGINT)  # Ctrl-C
        assert server.wait(timeout=20) == 0, log.read_text(errors="replace")[-6000:]
    ran_for = time.monotonic() - started

    # Every task ran, again and again, and no more often than its interval allows.
    runs = dict(PeriodicTask.objects.filter(name__in=schedule).values_list("name", "total_run_count"))
    most = math.ceil(ran_for / EVERY) + 1
    assert {name: count for name, count in runs.items() if not 2 <= count <= most} == {}, (most, runs)
