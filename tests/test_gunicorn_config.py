"""gunicorn.conf.py, with gunicorn started on it in a process of its own.

No database is needed: the requests are for addresses that answer without one.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def gunicorn(directory: Path, **env: str) -> Iterator[int]:
    """gunicorn on gunicorn.conf.py on a free port (one worker unless ``WEB_WORKERS`` says), until the block ends."""
    port = free_port()
    log = directory / "gunicorn.log"
    environment = {**os.environ, "WEB_WORKERS": "1", "LADDER_VAR_DIR": str(directory), **env}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"gunicorn did not start:\n{log.read_text()}")
                time.sleep(0.1)
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def gunicorn_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with gunicorn(tmp_path_factory.mktemp("gunicorn")) as port:
        yield port


def get(port: int, path: str, headers: dict[str, str] | None = None, timeout: float = 30) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_responses_do_not_name_gunicorn(gunicorn_port):
    response = get(gunicorn_port, "/api/v1/no-such-endpoint/")

    assert response.status == 404  # answered by the application, through gunicorn
    assert "gunicorn" not in (response.getheader("Server") or "").lower()


def test_requests_with_too_many_header_fields_are_refused(gunicorn_port):
    """gunicorn's own default is 100 fields; the config allows 50."""
    fields = {f"X-Field-{n}": "1" for n in range(60)}

    assert get(gunicorn_port, "/api/v1/no-such-endpoint/", fields).status == 431  # Request Header Fields Too Large
    assert get(gunicorn_port, "/api/v1/no-such-endpoint/", dict(list(fields.items())[:40])).status == 404


NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


@pytest.fixture(scope="module")
def nginx_port(gunicorn_port: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """nginx with deploy/proxy.conf in front of the gunicorn above, as ``make stack`` runs it."""
    if NGINX is None:
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    port = free_port()
    prefix = tmp_path_factory.mktemp("nginx")
    prefix.chmod(0o755)
    user = "user www-data;" if os.geteuid() == 0 else ""
    temp_paths = " ".join(
        f"{kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (prefix / "nginx.conf").write_text(
        f"{user} pid {prefix / 'nginx.pid'}; error_log stderr warn; events {{}}\n"
        f"http {{ access_log off; {temp_paths}\n"
        f"  upstream ladder {{ server 127.0.0.1:{gunicorn_port}; }}\n"
        f"  server {{ listen 127.0.0.1:{port}; include {ROOT / 'deploy' / 'proxy.conf'};"
        f" location / {{ proxy_pass http://ladder; }} }}\n}}\n"
    )
    process = subprocess.Popen(
        [NGINX, "-e", "stderr", "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"nginx did not start: {process.stderr.read().decode() if process.stderr else ''}")
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_slow_clients_do_not_hold_the_worker_behind_the_proxy(nginx_port):
    """Three connections that never finish their request head would hold gunicorn's only
    worker (each in turn, for its whole timeout); nginx reads them instead."""
    slow = [socket.create_connection(("127.0.0.1", nginx_port)) for _ in range(3)]
    try:
        for connection in slow:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        # Without the proxy this waits for gunicorn to kill the worker (30 s), and times out.
        response = get(nginx_port, "/api/v1/no-such-endpoint/", timeout=10)
    finally:
        for connection in slow:
            connection.close()

    assert response.status == 404
    assert "gunicorn" not in (response.getheader("Server") or "").lower()


def get_gzipped(port: int, path: str) -> tuple[http.client.HTTPResponse, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response, body


@pytest.mark.parametrize(
    ("path", "content_type"),
    [("/api/v1/schema/", "application/vnd.oai.openapi+json"), ("/help/", "text/html"), ("/no-such-page/", "text/html")],
)
def test_the_schema_and_pages_come_gzipped_through_the_proxy(nginx_port, path, content_type):
    response, body = get_gzipped(nginx_port, path)

    assert response.getheader("Content-Type", "").startswith(content_type)
    assert response.getheader("Content-Encoding") == "gzip"
    assert "Accept-Encoding" in (response.getheader("Vary") or "")
    plain = gzip.decompress(body)
    assert len(body) * 2 < len(plain)
    if path == "/api/v1/schema/":
        assert json.loads(plain)["openapi"].startswith("3.")


def test_a_client_that_takes_no_gzip_gets_plain_text_through_the_proxy(nginx_port):
    connection = http.client.HTTPConnection("127.0.0.1", nginx_port, timeout=30)
    connection.request("GET", "/api/v1/schema/")
    response = connection.getresponse()
    body = response.read()
    connection.close()

    assert response.getheader("Content-Encoding") is None
    assert json.loads(body)["openapi"].startswith("3.")


def test_a_scrape_adds_up_the_counters_of_every_gunicorn_worker(tmp_path):
    """Multiprocess mode: each worker writes its counters to PROMETHEUS_MULTIPROC_DIR, and
    whichever worker answers a scrape reads them all."""
    from prometheus_client.parser import text_string_to_metric_families

    shared = tmp_path / "metrics"
    shared.mkdir()
    with gunicorn(tmp_path, WEB_WORKERS="2", PROMETHEUS_MULTIPROC_DIR=str(shared), METRICS_TOKEN="t0ken") as port:
        # A client that sends half its request holds the worker that took it (sync workers read
        # requests themselves), so the other worker answers the next ten; then it finishes.
        slow = socket.create_connection(("127.0.0.1", port), timeout=30)
        slow.sendall(b"GET /robots.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(0.2)  # accepted and being read by one worker
        for _ in range(10):
            assert get(port, "/robots.txt").status == 200
        slow.sendall(b"Connection: close\r\n\r\n")
        assert slow.recv(100).startswith(b"HTTP/1.1 200")
        slow.close()
        scrapes = []
        for _ in range(4):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", "/metrics", headers={"Authorization": "Bearer t0ken"})
            response = connection.getresponse()
            assert response.status == 200
            scrapes.append(response.read().decode())
            connection.close()
        writers = {path.name.rsplit("_", 1)[-1] for path in shared.glob("counter_*.db")}

    assert len(writers) == 2, writers  # both workers served requests and wrote their own files
    for text in scrapes:
        counts = {
            tuple(sorted(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "ladder_http_requests_total"
        }
        assert counts[(("method", "GET"), ("status", "200"), ("view", "robots_txt"))] == 11
