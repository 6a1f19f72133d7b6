"""A 503 with ``Retry-After`` for what cannot work while Redis (the cache or the broker) is down.

The cache works on without Redis (``core.cache``), but a task cannot be queued without
the broker. Such a request answers 503 Service Unavailable with ``Retry-After``, in the
API's error shape under ``/api/`` and as a page elsewhere, instead of a bare 500: the
client may retry, and nothing about the request was wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.errors import error_body

logger = logging.getLogger(__name__)

UNAVAILABLE_ERRORS = (BrokerError, RedisConnectionError, RedisTimeoutError)
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
        logger.error("%s %s: Redis unavailable, answered 503", request.method, request.path, exc_info=exception)
        response: HttpResponse
        if request.path.startswith("/api/"):
            response = JsonResponse(error_body("unavailable", UNAVAILABLE_MESSAGE), status=503)
        else:
            response = render(request, "503.html", {"retry_after": RETRY_AFTER_SECONDS}, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
