"""Error reports: with SENTRY_DSN set, a view that raises sends one event to Sentry, with no
personal data in it. Sentry's ingest endpoint is stood in for by an HTTP server on loopback
that keeps every envelope it is sent."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import sentry_sdk
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from sentry_sdk.integrations.celery import CeleryIntegration
from sentry_sdk.integrations.django import DjangoIntegration
from sentry_sdk.integrations.redis import RedisIntegration

from config.sentry import sentry_init

pytestmark = pytest.mark.django_db


def boom(request: HttpRequest) -> HttpResponse:
    name, email = request.user.get_username(), getattr(request.user, "email", "")
    raise RuntimeError(f"the view failed ({len(name) + len(email)})")


urlpatterns = [path("boom/", boom)]


class Ingest:
    """What the stand-in received: each envelope's items, as (item header, payload)."""

    def __init__(self) -> None:
        self.envelopes: list[list[tuple[dict[str, Any], bytes]]] = []
        self.raw: list[bytes] = []
        self.paths: list[str] = []
        self.arrived = threading.Condition()

    def events(self) -> list[dict[str, Any]]:
        return [
            json.loads(payload) for items in self.envelopes for header, payload in items if header["type"] == "event"
        ]


def parse_envelope(body: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """An envelope's items: a header line, then a payload of ``length`` bytes or up to the next newline."""
    items = []
    _, _, rest = body.partition(b"\n")  # the envelope's own header
    while rest.strip():
        line, _, rest = rest.partition(b"\n")
        header = json.loads(line)
        if "length" in header:
            payload, rest = rest[: header["length"]], rest[header["length"] :].removeprefix(b"\n")
        else:
            payload, _, rest = rest.partition(b"\n")
        items.append((header, payload))
    return items


@contextmanager
def sentry_to_loopback() -> Iterator[Ingest]:
    """Sentry initialised as ``SENTRY_DSN`` would, sending to a stand-in on loopback; on the way
    out, no client at all."""
    received = Ingest()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            with received.arrived:
                received.paths.append(self.path)
                received.raw.append(body)
                received.envelopes.append(parse_envelope(body))
                received.arrived.notify_all()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    sentry_init(
        dsn=f"http://publickey@127.0.0.1:{server.server_address[1]}/42",
        environment="staging",
        release="ladder@1.2.3",
        traces_sample_rate=0.0,
    )
    try:
        yield received
    finally:
        sentry_sdk.get_client().close(timeout=2)
        # Back to no client at all, as in a run without SENTRY_DSN: a client without a DSN would
        # still have the Django, Redis and Celery integrations record a span and a breadcrumb for
        # every query and command in the worker's remaining tests.
        sentry_sdk.get_global_scope().set_client(None)
        server.shutdown()
        server.server_close()


@pytest.fixture
def ingest() -> Iterator[Ingest]:
    with sentry_to_loopback() as received:
        yield received


# Far from the view: an event carries the source lines around each frame.
EMAIL = "alice.private@example.org"


def test_a_view_that_raises_sends_one_event_without_personal_data(ingest, settings, player):
    settings.ROOT_URLCONF = __name__
    player.email = EMAIL
    player.save(update_fields=["email"])
    client = Client(raise_request_exception=False)
    client.force_login(player)
    client.cookies["theme"] = "dark"
    session = client.cookies[settings.SESSION_COOKIE_NAME].value

    response = client.get("/boom/?page=2", HTTP_USER_AGENT="Mozilla/5.0 test")
    sentry_sdk.flush(timeout=5)

    assert response.status_code == 500
    events = ingest.events()
    assert len(events) == 1, events
    event = events[0]
    assert ingest.paths == ["/api/42/envelope/"]
    assert event["exception"]["values"][-1]["type"] == "RuntimeError"
    assert event["exception"]["values"][-1]["value"].startswith("the view failed")
    assert (event["environment"], event["release"]) == ("staging", "ladder@1.2.3")
    assert event["transaction"] == "/boom/"
    request = event.get("request", {})
    assert "cookies" not in request and "Cookie" not in request.get("headers", {})
    assert "user" not in event or not set(event["user"]) & {"id", "email", "username", "ip_address"}
    raw = b"".join(ingest.raw).decode()
    for secret in (session, "theme", "dark", "alice", EMAIL):
        assert secret not in raw, secret


def test_the_tests_after_it_run_as_without_a_dsn():
    """No client and no integration enabled once the stand-in is gone, so the worker's remaining
    tests record no span or breadcrumb (and run as a site without ``SENTRY_DSN`` does)."""
    with sentry_to_loopback() as received:
        assert sentry_sdk.get_client().get_integration(DjangoIntegration) is not None
        assert received.envelopes == []
    assert not sentry_sdk.get_client().is_active()
    for integration in (DjangoIntegration, RedisIntegration, CeleryIntegration):
        assert sentry_sdk.get_client().get_integration(integration) is None
