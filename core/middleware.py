"""A 503 with ``Retry-After`` for what cannot work while Redis (the broker) or PostgreSQL is down.

The cache works on without Redis (``core.cache``), but a task cannot be queued without
the broker, and nothing works without the database. Such a request answers 503 Service
Unavailable with ``Retry-After``, in the API's error shape under ``/api/`` and as a page
elsewhere, instead of a bare 500: the client may retry, and nothing about the request was
wrong. A database error covers a server that is down or restarting, a connection lost
mid-request, and a statement cancelled (a deadlock victim, a statement timeout): each is
worth another try.

The page for a database error is rendered without the context processors, which read the
signed-in user and the header's counts from the very database that failed: it shows the
site's frame as to a visitor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError as DatabaseInterfaceError
from django.db import OperationalError as DatabaseOperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.errors import error_body

logger = logging.getLogger(__name__)

REDIS_ERRORS = (BrokerError, RedisConnectionError, RedisTimeoutError)
DATABASE_ERRORS = (DatabaseOperationalError, DatabaseInterfaceError)
UNAVAILABLE_ERRORS = (*REDIS_ERRORS, *DATABASE_ERRORS)
RETRY_AFTER_SECONDS = 30
UNAVAILABLE_MESSAGE = "A service this request needs is briefly unavailable. Please try again in a moment."


class ServiceUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, UNAVAILABLE_ERRORS):
            return None
        database = isinstance(exception, DATABASE_ERRORS)
        what = "PostgreSQL" if database else "Redis"
        logger.error("%s %s: %s unavailable, answered 503", request.method, request.path, what, exc_info=exception)
        response: HttpResponse
        context = {"retry_after": RETRY_AFTER_SECONDS}
        if request.path.startswith("/api/"):
            response = JsonResponse(error_body("unavailable", UNAVAILABLE_MESSAGE), status=503)
        elif database:
            page = render_to_string("503.html", {**context, "request": request, "brand_name": settings.SITE_NAME})
            response = HttpResponse(page, status=503)
        else:
            response = render(request, "503.html", context, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
