"""``/healthz``, ``/readyz`` and ``/metrics``, answered before any other middleware.

A load balancer, a container runtime or Prometheus calls these by the machine's address,
over plain HTTP, many times a minute. Answered by the first middleware, they are not
redirected to HTTPS, need no ``Host`` in ``ALLOWED_HOSTS`` (their answers never use the
host), read and write no session, pass no two-factor gate and no rate limit, and are left out
of the request metrics. Their answers are never cached (``Cache-Control: no-store``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse

from monitoring.health import readiness, replica_report
from monitoring.metrics import metrics_view

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"


def healthz(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> HttpResponse:
    ready, checks = readiness()
    body: dict[str, Any] = {"status": "ok" if ready else "fail", "checks": checks}
    if (replica := replica_report()) is not None:
        body["replica"] = replica
    return JsonResponse(body, status=200 if ready else 503)


PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    HEALTH_PATH: healthz,
    READY_PATH: readyz,
    METRICS_PATH: metrics_view,
}


class ProbeMiddleware:
    """The first middleware: answers the probes' paths itself; any other request goes on."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        probe = PROBES.get(request.path_info)
        if probe is None:
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            response = HttpResponse("Method not allowed\n", status=405, content_type="text/plain")
            response["Allow"] = "GET, HEAD"
        else:
            response = probe(request)
        response["Cache-Control"] = "no-store"
        return response
