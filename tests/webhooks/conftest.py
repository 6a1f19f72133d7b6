"""A real HTTP receiver on loopback for webhook deliveries, and webhooks pointing at it.

`receiver` is a ``ThreadingHTTPServer`` on 127.0.0.1 (a free port) that records every
request and answers from a script: ``receiver.answer(500, 500, 204)`` makes the next
three answers those, then 204 again. Loopback is a private address, which deliveries
refuse by default; `receiver` allows it for the test (``WEBHOOK_ALLOW_PRIVATE_ADDRESSES``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from webhooks.models import Event, Format, Webhook


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    server: ThreadingHTTPServer
    received: list[Received] = field(default_factory=list)
    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    trickle_seconds: float = 0.0  # > 0: the answer is sent a byte at a time, this far apart
    body_delay: float = 0.0  # > 0: the body follows the headers this much later
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str = "/hook") -> str:
        return self.base + path

    def answer(self, *codes: int, headers: dict[str, str] | None = None) -> None:
        with self.lock:
            self.script.extend((code, headers or {}) for code in codes)

    def next_answer(self) -> tuple[int, dict[str, str]]:
        with self.lock:
            return self.script.pop(0) if self.script else (204, {})


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with receiver.lock:
                receiver.received.append(Received(self.path, dict(self.headers.items()), body))
            code, headers = receiver.next_answer()
            if receiver.trickle_seconds:
                try:
                    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(receiver.trickle_seconds)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the sender gave up on the answer, as the trickling tests expect
                return
            reply = b"" if code == 204 else f"answer {code}".encode()
            self.send_response(code)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            if receiver.body_delay:
                self.wfile.flush()
                time.sleep(receiver.body_delay)
            self.wfile.write(reply)

        def log_message(self, format: str, *args: object) -> None:  # quiet in the test output
            pass

    return Handler


@pytest.fixture
def receiver(settings) -> Iterator[Receiver]:
    """receiver: a loopback HTTP server recording deliveries; webhooks may post to loopback meanwhile."""
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    receiver = Receiver(server)
    server.RequestHandlerClass = _handler(receiver)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def json_hook(ladder, receiver) -> Webhook:
    """json_hook: `ladder`'s signed JSON webhook to `receiver`, for every event."""
    return Webhook.objects.create(
        ladder=ladder, name="bot", url=receiver.url("/bot"), format=Format.JSON, events=list(Event.values)
    )


@pytest.fixture
def discord_hook(ladder, receiver) -> Webhook:
    """discord_hook: `ladder`'s Discord webhook to `receiver`, for rated matches."""
    return Webhook.objects.create(
        ladder=ladder, name="#results", url=receiver.url("/discord"), format=Format.DISCORD, events=["match.rated"]
    )
