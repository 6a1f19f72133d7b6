"""Log lines that say which request they belong to, as text or as JSON (``LOG_FORMAT``).

``RequestLogContextMiddleware`` gives each request an id, the proxy's ``X-Request-ID`` when
it sends a sane one (nginx's ``$request_id``, so the proxy's log and the site's agree), else
a new one, and keeps it with the request's path while the request runs.
``RequestContextFilter`` puts both on every log record made meanwhile (``request_id`` and
``path``, empty outside a request; Django's own ``django.request`` lines, written after the
middleware has returned, take them from the request they carry), and ``JsonFormatter`` writes each record as one JSON
object on one line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``,
``request_id`` and ``path`` when known, and ``exception`` (the traceback) when there is one.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponseBase

_request: ContextVar[tuple[str, str] | None] = ContextVar("log_request", default=None)
# What the site takes from a proxy as a request id: letters, digits and - _ . : up to 64.
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class RequestLogContextMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        given = request.headers.get("X-Request-ID", "")
        request_id = given if SANE_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]  # for django.request's own lines
        token = _request.set((request_id, request.path))
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


class RequestContextFilter(logging.Filter):
    """Adds ``request_id`` and ``path`` to each record (empty outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        current = _request.get()
        # django.request logs a response after the middleware returned it, naming the request.
        request = getattr(record, "request", None)
        if current is None and isinstance(request, HttpRequest):
            current = (str(getattr(request, "request_id", "")), request.path)
        if not hasattr(record, "request_id"):
            record.request_id = current[0] if current else ""
        if not hasattr(record, "path"):
            record.path = current[1] if current else ""
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request_id, path, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, str] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for field in ("request_id", "path"):
            if value := getattr(record, field, ""):
                entry[field] = str(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False)
