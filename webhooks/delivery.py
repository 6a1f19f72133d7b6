"""Posting one delivery: the HTTP request, and the log of how each attempt went.

The request is the standard library's ``http.client`` (no new dependency), which follows
no redirects: a 3xx is a failure, logged with its ``Location``, so a webhook cannot be
bounced to another host. Connecting may take ``CONNECT_TIMEOUT`` and the whole attempt
``TOTAL_TIMEOUT``, enforced on every read and write (a server that trickles its answer
byte by byte is cut off too), so an attempt holds a worker 10 s at most. The host name is
resolved once, every address it gives checked (``webhooks.addresses``: none may be
loopback, private or reach one through an IPv6 translation, unless
``WEBHOOK_ALLOW_PRIVATE_ADDRESSES``), and the first is connected to, so a name cannot be
switched to a private address between the check and the request. Looking the name up is
bounded by the system's resolver, not by these timeouts.

An attempt first claims its delivery with a conditional update (pending and due), moving
its time on by ``LEASE`` (``webhooks.store.delivery_claim``): two tasks for one delivery, or
a task and the sweep, never post it twice at once.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import io
import logging
import socket
import ssl
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.utils import timezone

from webhooks.addresses import Private, Resolver, Unresolved, host_address, system_resolve
from webhooks.models import DeliveryStatus, Format, WebhookDelivery, allow_private_addresses
from webhooks.services import webhook_record_failure, webhook_record_success
from webhooks.store import Claimed, delivery_claim

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 3.0
TOTAL_TIMEOUT = 10.0
LEASE = timedelta(seconds=60)  # longer than an attempt can take
MAX_ATTEMPTS = 8
BACKOFF_FIRST = 30  # seconds before the second attempt; doubled for each next one
BACKOFF_MAX = 3600
ERROR_MAX = 300
USER_AGENT = "ladder-webhooks/1"

NOT_SENT_INACTIVE = "Not sent: the webhook was paused or switched off."


@dataclass(frozen=True, slots=True)
class PostResult:
    """What one POST came to: the status code if an answer came, and a short error unless 2xx."""

    code: int | None
    error: str
    retry_after: float | None = None  # seconds, from a 429's Retry-After

    @property
    def ok(self) -> bool:
        return self.code is not None and 200 <= self.code < 300


@dataclass(frozen=True, slots=True)
class Attempt:
    """How ``delivery_attempt`` left the delivery: its status, and when to try again if pending."""

    status: str  # a DeliveryStatus value, or "skipped" when it was not pending and due
    retry_at: datetime | None = None


def backoff(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: 30 s, 1 min, 2 min, ... up to an hour."""
    return timedelta(seconds=min(BACKOFF_FIRST * 2 ** (attempts - 1), BACKOFF_MAX))


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """HMAC-SHA256 of ``"<timestamp>.<body>"`` under the webhook's secret, as hex."""
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def headers_for(claimed: Claimed, body: bytes, *, timestamp: int) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Ladder-Event": claimed.event,
        "X-Ladder-Delivery": str(claimed.delivery_id),
    }
    if claimed.format == Format.JSON:
        # After a rotation both secrets sign for a while: a bot checks either (docs/operations.md).
        secrets = [claimed.secret, claimed.previous_secret] if claimed.previous_secret else [claimed.secret]
        signed = ",".join(f"v1={signature(secret, timestamp, body)}" for secret in secrets)
        headers["X-Ladder-Signature"] = f"t={timestamp},{signed}"
    return headers


def delivery_attempt(*, delivery_id: int, now: datetime | None = None, resolve: Resolver = system_resolve) -> Attempt:
    """Post a pending, due delivery once and log the outcome; safe to call twice.

    A success costs two statements (claim, record), one more if it ends a run of failures.
    """
    now = now or timezone.now()
    claimed = delivery_claim(delivery_id=delivery_id, now=now, lease_until=now + LEASE)
    if claimed is None:
        return Attempt("skipped")
    if not claimed.is_active:
        _settle(claimed.pk, status=DeliveryStatus.FAILED, code=None, error=NOT_SENT_INACTIVE)
        return Attempt(DeliveryStatus.FAILED)
    body = claimed.payload.encode()
    result = post(claimed.url, body, headers_for(claimed, body, timestamp=int(time.time())), resolve=resolve)
    if not result.ok:
        return _failed(claimed, result, now=now)
    _settle(claimed.pk, status=DeliveryStatus.DELIVERED, code=result.code, error="", delivered_at=now)
    if claimed.consecutive_failures:
        webhook_record_success(webhook_id=claimed.webhook_id)
    return Attempt(DeliveryStatus.DELIVERED)


def _failed(claimed: Claimed, result: PostResult, *, now: datetime) -> Attempt:
    logger.info(
        "webhook %s delivery %s attempt %s failed: %s", claimed.webhook_id, claimed.pk, claimed.attempts, result.error
    )
    retry_at = None
    if claimed.attempts < MAX_ATTEMPTS:
        wait = backoff(claimed.attempts)
        if result.retry_after is not None:
            wait = max(wait, timedelta(seconds=min(result.retry_after, BACKOFF_MAX)))
        retry_at = now + wait
    status = DeliveryStatus.PENDING if retry_at else DeliveryStatus.FAILED
    with transaction.atomic():
        _settle(claimed.pk, status=status, code=result.code, error=result.error, next_attempt_at=retry_at)
        webhook_record_failure(webhook_id=claimed.webhook_id, error=result.error, now=now)
    return Attempt(status, retry_at)


def _settle(
    pk: int,
    *,
    status: str,
    code: int | None,
    error: str,
    delivered_at: datetime | None = None,
    next_attempt_at: datetime | None = None,
) -> None:
    WebhookDelivery.objects.filter(pk=pk).update(
        status=status,
        response_code=code,
        error=error[:ERROR_MAX],
        delivered_at=delivered_at,
        next_attempt_at=next_attempt_at,
    )


class Refused(Exception):
    """The address may not receive webhooks (its scheme or where its name points)."""


def post(url: str, body: bytes, headers: dict[str, str], *, resolve: Resolver = system_resolve) -> PostResult:
    """POST ``body`` to ``url`` once, within the timeouts, following no redirect."""
    deadline = time.monotonic() + TOTAL_TIMEOUT
    parts = urlsplit(url)
    try:
        connection = _connect(url, deadline, resolve)
        try:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            try:
                snippet = response.read(200).decode("utf-8", "replace").strip()
            finally:
                response.close()
        finally:
            connection.close()
    except Refused as exc:
        return PostResult(None, str(exc))
    except TimeoutError:
        return PostResult(None, f"No answer within {TOTAL_TIMEOUT:g} s (connecting may take {CONNECT_TIMEOUT:g} s).")
    except ssl.SSLError as exc:
        return PostResult(None, f"TLS error: {exc.reason or exc}")
    except (OSError, http.client.HTTPException) as exc:
        return PostResult(None, f"{type(exc).__name__}: {exc}")
    return _result(response, snippet)


def _result(response: http.client.HTTPResponse, snippet: str) -> PostResult:
    code = response.status
    if 200 <= code < 300:
        return PostResult(code, "")
    if 300 <= code < 400:
        location = response.getheader("Location", "")
        logger.warning("webhook answered %s, a redirect to %s: not followed", code, location)
        return PostResult(code, f"HTTP {code}: redirect to {location or '(no Location)'} not followed.")
    retry_after = None
    if code == 429:
        try:
            retry_after = float(response.getheader("Retry-After", ""))
        except ValueError:
            retry_after = None
    return PostResult(code, f"HTTP {code}: {snippet}" if snippet else f"HTTP {code}.", retry_after)


def _connect(url: str, deadline: float, resolve: Resolver) -> http.client.HTTPConnection:
    """A connection to the checked address of ``url``'s host, its socket bound by ``deadline``."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host:
        raise Refused(f"Refused: {url!r} is not an http(s) address.")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = _address(host, port, resolve)
    sock = socket.create_connection(address, timeout=min(CONNECT_TIMEOUT, _left(deadline)))
    connection: http.client.HTTPConnection
    try:
        if parts.scheme == "https":
            sock.settimeout(_left(deadline))
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
            connection = http.client.HTTPSConnection(host, port)
        else:
            connection = http.client.HTTPConnection(host, port)
    except BaseException:
        sock.close()
        raise
    connection.sock = _DeadlineSocket(sock, deadline)
    return connection


def _address(host: str, port: int, resolve: Resolver) -> tuple[str, int]:
    """The checked address to connect to for ``host`` (``webhooks.addresses.host_address``)."""
    try:
        return host_address(host, port, resolve=resolve, allow_private=allow_private_addresses()), port
    except Unresolved as exc:
        raise Refused(f"Cannot resolve {host}: {exc}") from exc
    except Private as exc:
        raise Refused(f"Refused: {host} resolves to a private or local address.") from exc


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    return left


class _DeadlineSocket:
    """The parts of a socket ``http.client`` uses, each call given the time left to ``deadline``.

    Like a socket, it stays open while a file made from it is open: ``http.client`` closes
    the connection as soon as an HTTP/1.0 answer's headers are read, before its body.
    """

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline
        self._files = 0
        self._closed = False

    def sendall(self, data: Any) -> None:
        self._sock.settimeout(_left(self._deadline))
        self._sock.sendall(data)

    def recv_into(self, buffer: Any, nbytes: int = 0) -> int:
        self._sock.settimeout(_left(self._deadline))
        return self._sock.recv_into(buffer, nbytes)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        self._files += 1
        return io.BufferedReader(_Reader(self))

    def file_closed(self) -> None:
        self._files -= 1
        if self._closed and not self._files:
            self._sock.close()

    def close(self) -> None:
        self._closed = True
        if not self._files:
            self._sock.close()


class _Reader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket) -> None:
        self._sock: _DeadlineSocket | None = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._sock is None:
            raise ValueError("read of a closed file")
        return self._sock.recv_into(buffer)

    def close(self) -> None:
        if self._sock is not None:
            sock, self._sock = self._sock, None
            sock.file_closed()
        super().close()
