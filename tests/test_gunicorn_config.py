"""gunicorn.conf.py, with gunicorn started on it in a process of its own.

No database is needed: the requests are for addresses that answer without one.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def gunicorn_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    port = free_port()
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    env = {**os.environ, "WEB_WORKERS": "1", "LADDER_VAR_DIR": str(log.parent)}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
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


def get(port: int, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
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
