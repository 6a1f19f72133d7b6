"""The read replica (``DATABASE_REPLICA_URL``, core/replica.py) against a real streaming standby.

The test copies the suite's PostgreSQL with ``pg_basebackup -R`` and starts the copy as a hot
standby on a free loopback port, then runs the site in gunicorn (two workers) with
``DATABASE_URL`` on the test database and ``DATABASE_REPLICA_URL`` on the standby's copy of it.

The proof that a read came from the replica: with the standby's replay paused, players join
the ladder on the primary; an anonymous reader's leaderboard, ladder page and statistics are
still the standby's, without them, while each writer (a bot by its token, a browser by its
cookie) reads the primary, with its own join. Once the paused standby is further behind than
``DATABASE_REPLICA_MAX_LAG_SECONDS``, everyone reads the primary; replay resumed, the replica
is in use again; the standby stopped, every read still answers, from the primary. Every write
succeeds throughout: one sent to the standby would have been refused (it is read-only).
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.test import Client

from api.services import token_create
from ladder.membership import ladder_join
from ladder.models import Ladder
from tests.factories import LadderFactory, UserFactory
from tests.test_celery_worker import database_url
from tests.test_scale_out import free_port, logs_of

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
MAX_LAG, CHECK, PIN = 5.0, 0.5, 6  # seconds: short, so falling back for lag shows within the test
METRICS_TOKEN = "replica-test-metrics-token"


def pg_bin(name: str) -> str:
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not found:
        pytest.skip(f"PostgreSQL's {name} is not installed")
    return str(found[-1])


def as_postgres(args: list[str]) -> list[str]:
    """``args`` run as the postgres user when the suite runs as root (PostgreSQL refuses root)."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def primary_address() -> tuple[str, int, int]:
    """The PostgreSQL server itself (not a pooler in front of it), where a replication connection
    goes, and its ``max_connections`` (a hot standby needs at least as many)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT host(inet_server_addr()), inet_server_port(), current_setting('max_connections')")
        host, port, connections = cursor.fetchone()
    return host or "127.0.0.1", port, int(connections)


@contextmanager
def standby(port: int) -> Iterator[Path]:
    """A hot standby of the suite's PostgreSQL on ``port``, streaming; stopped and removed on the way out."""
    host, primary_port, max_connections = primary_address()
    directory = Path(tempfile.mkdtemp(prefix="ladder-replica-"))
    data = directory / "data"
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    copy = [pg_bin("pg_basebackup"), "-h", host, "-p", str(primary_port), "-U", "postgres", "-D", str(data)]
    try:
        subprocess.run(
            as_postgres([*copy, "-R", "-X", "stream", "-c", "fast", "--no-sync", "--no-manifest"]),
            check=True,
            capture_output=True,
            timeout=120,
        )
        options = (
            f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -c hot_standby=on -c fsync=off "
            f"-c wal_retrieve_retry_interval=500ms -c max_connections={max_connections}"
        )
        start = [pg_bin("pg_ctl"), "-D", str(data), "-l", str(directory / "standby.log"), "-w", "start", "-o", options]
        started = subprocess.run(as_postgres(start), capture_output=True, text=True, timeout=60)
        if started.returncode:
            log = (directory / "standby.log").read_text(errors="replace")
            pytest.fail(f"the standby did not start: {started.stdout}{started.stderr}\n{log[-3000:]}")
        yield directory
    finally:
        stop_standby(directory, mode="immediate")
        shutil.rmtree(directory, ignore_errors=True)


def stop_standby(directory: Path, *, mode: str) -> None:
    if (directory / "data" / "postmaster.pid").exists():
        stop = [pg_bin("pg_ctl"), "-D", str(directory / "data"), "-m", mode, "-w", "stop"]
        subprocess.run(as_postgres(stop), capture_output=True, timeout=60)


def on_standby(port: int, sql: str) -> tuple:
    with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres", autocommit=True) as c:
        return c.execute(sql).fetchone()


def wait_until_replayed(port: int, *, seconds: float = 20) -> None:
    """Until the standby has replayed everything the primary has committed so far (the WAL's insert
    position: with ``synchronous_commit`` off a commit is written out a moment after it returns)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
        (target,) = cursor.fetchone()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            (done,) = on_standby(port, f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")
            if done:
                return
        except psycopg.OperationalError:
            pass  # still starting
        time.sleep(0.05)
    pytest.fail(f"the standby did not replay up to {target} within {seconds} s")


@contextmanager
def site(directory: Path, replica_port: int) -> Iterator[tuple[int, subprocess.Popen]]:
    """gunicorn (two workers) on the test database, reading from the replica at ``replica_port``;
    started, not waited for (``wait_serving``)."""
    port = free_port()
    test_db = database_url()
    env = {
        **os.environ,
        "DATABASE_URL": test_db,
        "DATABASE_REPLICA_URL": re.sub(r"@[^/]+/", f"@127.0.0.1:{replica_port}/", test_db),
        "DATABASE_REPLICA_MAX_LAG_SECONDS": str(MAX_LAG),
        "DATABASE_REPLICA_CHECK_SECONDS": str(CHECK),
        "DATABASE_REPLICA_PIN_SECONDS": str(PIN),
        "API_LEADERBOARD_CACHE_SECONDS": "0",  # every read ranks anew, on the database it is routed to
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "READY_BEAT_MINUTES": "0",  # no beat here: /readyz checks what this test is about
        "WEB_WORKERS": "2",
        "WEB_TIMEOUT": "60",
        "LADDER_VAR_DIR": str(directory),
        "STATIC_MANIFEST": "0",
        "METRICS_TOKEN": METRICS_TOKEN,
    }
    with (directory / "gunicorn.log").open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield port, process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_serving(port: int, process: subprocess.Popen, logs: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"gunicorn did not start\n{logs_of(logs)}")
            time.sleep(0.1)


class Reader:
    """An HTTP client of the site: anonymous, a bot (``token``) or a browser (``session``, with its cookies)."""

    def __init__(self, port: int, *, token: str = "", session: str = "") -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.token = token
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)
        if session:
            self.jar.set_cookie(cookie("sessionid", session))

    def send(self, method: str, path: str, *, form: dict[str, str] | None = None) -> tuple[int, str, dict]:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif method == "POST":
            data, headers["Content-Type"] = b"{}", "application/json"
        request = urllib.request.Request(self.base + path, method=method, data=data, headers=headers)
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as answer:
            return answer.code, answer.read().decode(), dict(answer.headers)

    def get(self, path: str) -> str:
        status, text, _ = self.send("GET", path)
        assert status == 200, (path, status, text[:500])
        return text

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None  # a 302 is the answer itself


def cookie(name: str, value: str) -> http.cookiejar.Cookie:
    return http.cookiejar.Cookie(
        0, name, value, None, False, "127.0.0.1", False, False, "/", True, False, None, False, None, None, {}
    )


def ready(port: int) -> dict:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as refusal:
        pytest.fail(f"/readyz answered {refusal.code}: {refusal.read().decode()}")


def replica_in_use_gauge(port: int) -> float:
    """``ladder_replica_in_use`` as the web process that answers the scrape reports it."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        found = re.search(r"^ladder_replica_in_use (\S+)$", response.read().decode(), re.MULTILINE)
    assert found is not None
    return float(found.group(1))


def wait_for_replica_state(port: int, state: str, *, seconds: float = 20) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        body = ready(port)
        if body["replica"]["state"] == state or time.monotonic() > deadline:
            assert body["replica"]["state"] == state, body
            return body
        time.sleep(0.2)


def test_public_reads_come_from_the_replica_and_writers_read_their_writes(tmp_path):
    ladder = LadderFactory(show_provisional=True)
    ann = UserFactory(username="replica-ann")  # a member from the start
    ladder_join(ladder=ladder, player=ann)
    bot, browser = UserFactory(username="replica-bot"), UserFactory(username="replica-carol")
    _, secret = token_create(user=bot, name="bot")
    signed_in = Client()
    signed_in.force_login(browser)
    board = f"/api/v1/ladders/{ladder.slug}/leaderboard/"
    pages = (board, f"/api/v1/ladders/{ladder.slug}/", f"/ladders/{ladder.slug}/", f"/ladders/{ladder.slug}/stats/")

    replica_port = free_port()
    # gunicorn starts while the standby is copied: until it answers, the site reads the primary.
    with site(tmp_path, replica_port) as (port, web), standby(replica_port) as directory:
        wait_serving(port, web, tmp_path)
        anonymous = Reader(port)
        robot = Reader(port, token=secret)
        carol = Reader(port, session=signed_in.cookies["sessionid"].value)
        wait_until_replayed(replica_port)
        for path in pages:  # warm both workers: imports done, connections open
            for _ in range(3):
                anonymous.get(path)
        assert wait_for_replica_state(port, "streaming")["replica"]["in_use"] is True
        the_page = carol.get(f"/ladders/{ladder.slug}/")  # the browser's CSRF cookie and the join form's token
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', the_page).group(1)

        # Replay paused just after the standby replayed a commit: its lag counts from now.
        Ladder.objects.filter(pk=ladder.pk).update(description=ladder.description)
        wait_until_replayed(replica_port)
        on_standby(replica_port, "SELECT pg_wal_replay_pause()")
        paused_at = time.monotonic()
        assert robot.send("POST", f"/api/v1/ladders/{ladder.slug}/membership/")[0] == 201
        joined = carol.send("POST", f"/ladders/{ladder.slug}/join/", form={"csrfmiddlewaretoken": csrf})
        assert joined[0] == 302, joined[1][:500]
        assert carol.cookie("ladder_primary") is not None  # the browser's pin
        with connection.cursor() as cursor:  # on the primary, both joined
            cursor.execute("SELECT count(*) FROM ratings_playerrating WHERE ladder_id = %s", [ladder.pk])
            assert cursor.fetchone()[0] == 3

        # The anonymous reader is served by the paused standby: no new member anywhere.
        for path in (board, f"/ladders/{ladder.slug}/"):
            text = anonymous.get(path)
            assert "replica-ann" in text, path
            assert "replica-bot" not in text and "replica-carol" not in text, path
        anonymous.get(f"/api/v1/ladders/{ladder.slug}/")
        anonymous.get(f"/ladders/{ladder.slug}/stats/")
        # Each writer reads the primary: their own join is there (and the other's, on the same primary).
        assert "replica-bot" in robot.get(board)
        carols = carol.get(f"/ladders/{ladder.slug}/")
        assert "replica-carol" in carols and "replica-bot" in carols
        # The bot's account is pinned too, wherever it signs in from.
        assert time.monotonic() - paused_at < MAX_LAG, "too slow to see the paused standby serve reads"

        # Further behind than MAX_LAG: everyone reads the primary, and the site stays ready.
        time.sleep(max(0.0, paused_at + MAX_LAG + CHECK - time.monotonic()))
        body = wait_for_replica_state(port, "behind")
        assert body["status"] == "ok" and body["replica"]["in_use"] is False
        assert body["replica"]["lag_seconds"] > MAX_LAG
        deadline = time.monotonic() + 10
        while "replica-bot" not in anonymous.get(board) and time.monotonic() < deadline:
            time.sleep(0.2)  # the other worker checks on its own, within CHECK
        for _ in range(4):
            text = anonymous.get(board)
            assert "replica-bot" in text and "replica-carol" in text

        # Resumed, the standby catches up and serves again.
        on_standby(replica_port, "SELECT pg_wal_replay_resume()")
        wait_until_replayed(replica_port)
        assert wait_for_replica_state(port, "streaming")["replica"]["in_use"] is True
        assert "replica-bot" in anonymous.get(board)
        # The scraped worker's gauge says so once it has checked again. On a busy machine the
        # standby can fall behind for a moment (the other tests write to the same server), so
        # the gauge is read until it does.
        deadline = time.monotonic() + 20
        while replica_in_use_gauge(port) != 1:
            assert time.monotonic() < deadline, "the gauge never showed the replica in use"
            time.sleep(CHECK)

        # The standby stopped: every read still answers, from the primary; the site stays ready.
        stop_standby(directory, mode="immediate")  # as a crash or a pulled cable leaves it
        for path in pages:
            for _ in range(3):
                text = anonymous.get(path)
                if path == board:
                    assert "replica-bot" in text and "replica-carol" in text
        body = wait_for_replica_state(port, "unreachable")
        assert body["status"] == "ok" and body["replica"]["in_use"] is False
        assert str(replica_port) not in json.dumps(body)  # no address in the probe's answer
        time.sleep(CHECK)
        assert replica_in_use_gauge(port) == 0
        # Writes go on (to the primary, as they always did).
        assert robot.send("DELETE", f"/api/v1/ladders/{ladder.slug}/membership/")[0] == 200

    log = (tmp_path / "gunicorn.log").read_text(errors="replace")
    assert "read-only transaction" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
