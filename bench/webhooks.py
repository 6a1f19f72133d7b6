"""Webhook deliveries a second by one worker, to a receiver on loopback.

A ladder gets one signed JSON webhook (the format with the most work: an HMAC per attempt)
pointing at a receiver in its own process (``http.server``'s ``ThreadingHTTPServer``, which
checks every signature and answers 204). Then, each time ``--deliveries`` events:

1. **one process**: ``webhook_emit`` writes the deliveries in one transaction (timed on its
   own), then ``delivery_attempt`` posts them one after another in this process: the work
   of one worker without the broker (claim, load, POST, record: three statements and one
   HTTP request each).
2. **one Celery worker**: ``celery worker --pool solo`` (one process, one task at a time) on
   a queue of its own, with the production retry policy; the events are emitted in one
   transaction whose commit queues one task per delivery, and the clock runs from the
   commit until the database shows every delivery delivered. Broker: ``CELERY_BROKER_URL``
   if set, else a throwaway ``redis-server``. The worker keeps its database connection from
   task to task (``config/celery.py``): Celery's Django fixup would close it around every
   task, and a new PostgreSQL connection per delivery made 1,000 deliveries take 33–54 s.

Every delivery must end delivered and the receiver must have counted each one with a
valid signature. After that, this machine's write reference is measured on the same
PostgreSQL (bench/_reference.py: pgbench's simple-update, one client), and each rate is
printed as a ratio to it ("× ref").

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/webhooks.py [--deliveries 1000] [--skip-worker]``.

Target: 1,000 deliveries by one worker in at most 10 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pg
import _reference

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 10.0
TARGET_COUNT = 1_000

RECEIVER = r"""
import hashlib, hmac, json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

secret = sys.argv[1].encode()
counts = {"count": 0, "bad": 0}
lock = threading.Lock()

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        fields = dict(part.split("=", 1) for part in self.headers["X-Ladder-Signature"].split(","))
        expected = hmac.new(secret, fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
        with lock:
            counts["count"] += 1
            counts["bad"] += not hmac.compare_digest(expected, fields["v1"])
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        with lock:
            reply = json.dumps(counts).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
"""

SETTINGS = """from config.settings import *  # noqa: F403

WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True  # the receiver is on loopback
"""


@contextmanager
def receiver(secret: str) -> Iterator[str]:
    """The receiver's URL, its process stopped on the way out."""
    process = subprocess.Popen([sys.executable, "-c", RECEIVER, secret], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def received(base: str) -> dict[str, int]:
    with urllib.request.urlopen(base + "/count", timeout=10) as answer:
        return json.loads(answer.read())


@contextmanager
def broker() -> Iterator[str]:
    """``CELERY_BROKER_URL`` if set, else a throwaway ``redis-server`` on a free loopback port."""
    url = os.environ.get("CELERY_BROKER_URL", "")
    if url.startswith("redis://"):
        _pg.log("using the Redis of CELERY_BROKER_URL")
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("error: no CELERY_BROKER_URL and no redis-server (apt-get install redis-server)")
    port = _pg.free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        from api import wait_for_redis

        url = f"redis://127.0.0.1:{port}/0"
        wait_for_redis(url)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@contextmanager
def celery_worker(database: str, broker_url: str, queue: str, logs: Path) -> Iterator[subprocess.Popen]:
    """One ``celery worker --pool solo`` for the site whose default queue is ``queue``, reading its
    webhook queue (where ``CELERY_TASK_ROUTES`` sends the deliveries), allowed to post to loopback;
    stopped on the way out."""
    from django.conf import settings

    (logs / "webhooks_bench_settings.py").write_text(SETTINGS)
    env = {
        **os.environ,
        "PYTHONPATH": f"{logs}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": "webhooks_bench_settings",
        "DATABASE_URL": database,
        "CELERY_BROKER_URL": broker_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CELERY_QUEUE": queue,
        "DEBUG": "0",
    }
    # This process has the worker's CELERY_QUEUE, so its settings name the same webhook queue.
    webhook_queue = settings.CELERY_WEBHOOK_QUEUE
    args = ["worker", "--pool", "solo", "--queues", webhook_queue, "--hostname", f"{queue}@%h", "--loglevel", "INFO"]
    args += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    with (logs / "worker.log").open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", *args], cwd=ROOT, env=env, stdout=out, stderr=out
        )
        try:
            yield process
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def make_webhook(url: str):
    from ladder.models import Ladder
    from webhooks.models import Format, Webhook

    tag = uuid.uuid4().hex[:8]
    ladder = Ladder.objects.create(name=f"Webhook bench {tag}", slug=f"webhook-bench-{tag}", game="Benchmark")
    return Webhook.objects.create(ladder=ladder, name="bench", url=url, format=Format.JSON, events=["match.rated"])


def emit(webhook, count: int) -> tuple[list[int], float]:
    """``count`` match.rated events in one transaction; the new deliveries' ids and the seconds it took."""
    from django.db import transaction

    from webhooks.models import WebhookDelivery
    from webhooks.services import webhook_emit

    before = WebhookDelivery.objects.filter(webhook=webhook).order_by("-pk").values_list("pk", flat=True).first() or 0
    started = time.perf_counter()
    with transaction.atomic():
        for number in range(count):
            webhook_emit(
                ladder_id=webhook.ladder_id,
                event="match.rated",
                data={"match": number, "ladder": "bench", "sides": [{"placement": 1, "players": [{"username": "a"}]}]},
                summary=f"alice (+12) beat bob (-12), match {number}",
                url=f"/matches/{number}/",
            )
    seconds = time.perf_counter() - started
    ids = list(WebhookDelivery.objects.filter(webhook=webhook, pk__gt=before).values_list("pk", flat=True))
    return ids, seconds


def one_process(webhook, count: int) -> tuple[float, float]:
    """(emit seconds, delivery seconds) with the deliveries posted in a loop in this process."""
    import webhooks.services as services
    from webhooks.delivery import delivery_attempt

    enqueue = services.deliveries_enqueue
    services.deliveries_enqueue = lambda ids: None  # this loop is the worker
    try:
        ids, emit_seconds = emit(webhook, count)
    finally:
        services.deliveries_enqueue = enqueue
    started = time.perf_counter()
    for delivery_id in ids:
        delivery_attempt(delivery_id=delivery_id)
    return emit_seconds, time.perf_counter() - started


def through_worker(webhook, count: int, database: str, broker_url: str) -> tuple[float, float, float]:
    """(emit seconds, commit-to-all-delivered seconds, seconds inside the tasks by Celery's log) through
    one real Celery worker."""
    from webhooks.models import DeliveryStatus, WebhookDelivery

    queue = os.environ["CELERY_QUEUE"]
    logs = Path(tempfile.mkdtemp(prefix="ladder-webhooks-bench."))
    with celery_worker(database, broker_url, queue, logs) as worker:
        # A warm-up delivery: the worker is ready once it is delivered.
        ids, _ = emit(webhook, 1)
        wait_delivered(ids, worker, logs, timeout=60)
        ids, emit_seconds = emit(webhook, count)  # its commit queues the tasks
        committed = time.perf_counter()
        wait_delivered(ids, worker, logs, timeout=300)
        seconds = time.perf_counter() - committed
    delivered = WebhookDelivery.objects.filter(pk__in=ids, status=DeliveryStatus.DELIVERED).count()
    assert delivered == count, f"{delivered} of {count} delivered"
    runtimes = [float(found) for found in re.findall(r"succeeded in ([0-9.]+)s", (logs / "worker.log").read_text())]
    shutil.rmtree(logs, ignore_errors=True)
    return emit_seconds, seconds, sum(runtimes[-count:])


def wait_delivered(ids: list[int], worker: subprocess.Popen, logs: Path, timeout: float) -> None:
    from webhooks.models import DeliveryStatus, WebhookDelivery

    deadline = time.monotonic() + timeout
    while WebhookDelivery.objects.filter(pk__in=ids).exclude(status=DeliveryStatus.DELIVERED).exists():
        if worker.poll() is not None or time.monotonic() > deadline:
            sys.stderr.write((logs / "worker.log").read_text(errors="replace")[-5000:])
            raise SystemExit("error: the worker stopped or did not deliver in time (its log is above)")
        time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=TARGET_COUNT)
    parser.add_argument("--skip-worker", action="store_true", help="only the one-process figure (no broker needed)")
    args = parser.parse_args()

    with _pg.database() as url, broker() if not args.skip_worker else _nothing() as broker_url:
        if broker_url:
            os.environ["CELERY_BROKER_URL"] = broker_url
            os.environ["CELERY_QUEUE"] = f"webhooks-bench-{uuid.uuid4().hex[:8]}"
        try:
            _pg.setup_django(url)
            bench(args, url, broker_url)
        finally:
            _pg.close_django()


@contextmanager
def _nothing() -> Iterator[str]:
    yield ""


def bench(args: argparse.Namespace, url: str, broker_url: str) -> None:
    from django.conf import settings

    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True  # the receiver is on loopback
    count = args.deliveries
    secret = "bench-" + uuid.uuid4().hex
    with receiver(secret) as base:
        webhook = make_webhook(base + "/hook")
        type(webhook).objects.filter(pk=webhook.pk).update(secret=secret)
        webhook.refresh_from_db()
        one_process(webhook, 20)  # warm-up: connections, imports
        rows = []
        _pg.log(f"{count} deliveries in this process")
        emit_seconds, seconds = one_process(webhook, count)
        rows.append(("one process: delivery_attempt in a loop", seconds))
        if broker_url:
            _pg.log(f"{count} deliveries through one Celery worker (solo pool)")
            _, worker_seconds, in_tasks = through_worker(webhook, count, url, broker_url)
            rows.append(("one Celery worker (solo), commit to last delivered", worker_seconds))
            rows.append(("  of which inside the tasks (Celery's runtimes)", in_tasks))
        counts = received(base)
    expected = 20 + count + (1 + count if broker_url else 0)
    assert counts == {"count": expected, "bad": 0}, f"receiver counted {counts}, expected {expected} all valid"

    _pg.log("reference: pgbench simple-update on the same PostgreSQL")
    reference = _reference.pgbench_simple_update(url)
    print(f"{_pg.versions()}; receiver: ThreadingHTTPServer on loopback, its own process; JSON format, signed")
    print(reference.line())
    target = f"≤{TARGET_SECONDS:g} s for {TARGET_COUNT:,}"
    print(f"{'path':<52} {'deliveries':>10} {'seconds':>8} {'per s':>7} {'× ref':>7} {'ms each':>8} {'target':>22}")
    for label, seconds in rows:
        scaled = seconds * TARGET_COUNT / count
        verdict = "" if label.startswith(" ") else f"{target} {'ok' if scaled <= TARGET_SECONDS else 'MISSED'}"
        rate = count / seconds
        print(
            f"{label:<52} {count:>10,} {seconds:>8.2f} {rate:>7,.0f} {reference.ratio(rate):>7} "
            f"{1000 * seconds / count:>8.2f} {verdict:>22}"
        )
    rate = count / emit_seconds
    print(
        f"{'webhook_emit, one transaction (the caller pays this)':<52} {count:>10,} {emit_seconds:>8.2f} "
        f"{rate:>7,.0f} {reference.ratio(rate):>7} {1000 * emit_seconds / count:>8.2f}"
    )
    print(f"receiver: {counts['count']:,} deliveries, every signature valid")


if __name__ == "__main__":
    main()
