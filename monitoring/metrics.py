"""Prometheus metrics at ``/metrics`` (docs/operations.md, "Metrics").

Two kinds of figure, gathered two ways:

- **What each process counts**: requests by view (the URL's name, never its path), method
  and status, with their latency; Celery task runs by task and outcome, with their
  duration. These are prometheus-client counters and histograms. With
  ``PROMETHEUS_MULTIPROC_DIR`` set, every process (each gunicorn worker, each Celery pool
  process) writes them to its own files in that directory, and a scrape of any web process
  adds up the files of every process of the machine; without it (``make run``, one
  process), the scrape reads the process's own.
- **What the database knows**: players searching per ladder and format, the wait from
  search to pairing of the pairings of the last ``PAIRING_WINDOW``, matches awaiting
  confirmation, mail and webhook deliveries pending and failed, replay jobs by status, how
  long ago a worker last reported. ``DatabaseCollector`` reads them at each scrape with a
  few small queries on indexed columns, so every web process answers the same figures.
- **The read replica**, when ``DATABASE_REPLICA_URL`` is set: whether the scraped process
  reads from it and how far behind it was, as ``core.replica.check`` last found it.

The endpoint is off unless ``METRICS_TOKEN`` or ``METRICS_ALLOWED_ADDRESSES`` is set; with
a token it wants ``Authorization: Bearer <token>`` (401 otherwise), with addresses it answers
only clients among them (404 otherwise, as when it is off).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

from celery.signals import task_postrun, task_prerun
from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, Max, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils import timezone
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import REGISTRY, Collector

from accounts.throttling import client_address
from core import replica
from ladder.formats import of_mask
from ladder.models import Match, MatchStatus
from matchmaking.models import EntryStatus, QueueEntry
from monitoring.models import WorkerHeartbeat
from notifications.models import EmailStatus, Notification
from ratings.models import ReplayJob, ReplayJobStatus
from webhooks.models import DeliveryStatus, WebhookDelivery

logger = logging.getLogger(__name__)

PAIRING_WINDOW = timedelta(minutes=15)
# A pairing counts in the window only if its search began within this long before it: the
# read is then a range on the (status, joined_at) index. Longer searches are rare (a ladder's
# queue timeout is at most an hour) and are left out of the quantiles.
PAIRING_LONGEST_SEARCH = timedelta(hours=2)
QUANTILES = (0.5, 0.9, 0.99)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

REQUESTS = Counter(
    "ladder_http_requests", "HTTP requests answered, by URL name, method and status.", ["view", "method", "status"]
)
REQUEST_SECONDS = Histogram(
    "ladder_http_request_duration_seconds",
    "Time from a request reaching Django to its answer, by URL name.",
    ["view"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
TASK_RUNS = Counter(
    "ladder_celery_task_runs", "Celery task runs, by task and outcome (success, failure, retry).", ["task", "outcome"]
)
TASK_SECONDS = Histogram(
    "ladder_celery_task_duration_seconds",
    "How long a Celery task ran, by task.",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0),
)

NOT_RESOLVED = "<unresolved>"  # no URL matched: a 404 before any view, or a middleware's answer


class RequestMetricsMiddleware:
    """Counts and times every request the site's URLs answer, by the matched URL's name.

    Put first after the probes, so the time covers the other middleware too. A path that
    matched no URL counts as ``<unresolved>``: a scan of made-up paths adds no series.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name or NOT_RESOLVED) if match is not None else NOT_RESOLVED
        method = request.method if request.method in METHODS else "other"
        REQUESTS.labels(view, method, str(response.status_code)).inc()
        REQUEST_SECONDS.labels(view).observe(time.perf_counter() - started)
        return response


# -- Celery ---------------------------------------------------------------------------------

_task_started: dict[str, float] = {}
OUTCOMES = {"SUCCESS": "success", "FAILURE": "failure", "RETRY": "retry"}


def _task_prerun(task_id: str | None = None, **kwargs: Any) -> None:
    if task_id is not None:
        _task_started[task_id] = time.perf_counter()


def _task_postrun(task_id: str | None = None, task: Any = None, state: str | None = None, **kwargs: Any) -> None:
    started = _task_started.pop(task_id, None) if task_id is not None else None
    name = getattr(task, "name", None) or "unknown"
    TASK_RUNS.labels(name, OUTCOMES.get(state or "", "other")).inc()
    if started is not None:
        TASK_SECONDS.labels(name).observe(time.perf_counter() - started)


def task_signals_connect() -> None:
    """Counts task runs wherever they run: in a worker, or eagerly in the web process."""
    task_prerun.connect(_task_prerun, weak=False, dispatch_uid="monitoring.task_prerun")
    task_postrun.connect(_task_postrun, weak=False, dispatch_uid="monitoring.task_postrun")


# -- What the database knows -----------------------------------------------------------------


def _quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of sorted ``values``, interpolated linearly (as PostgreSQL's percentile_cont)."""
    position = q * (len(values) - 1)
    low = int(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def _by_status(
    name: str, documentation: str, rows: QuerySet[Any], field: str, statuses: tuple[str, ...]
) -> GaugeMetricFamily:
    """How many ``rows`` have each of ``statuses`` in ``field`` (0 for those none has)."""
    counts = dict(rows.filter(**{f"{field}__in": statuses}).values_list(field).annotate(n=Count("id")).order_by())
    family = GaugeMetricFamily(name, documentation, labels=["status"])
    for status in statuses:
        family.add_metric([str(status)], counts.get(status, 0))
    return family


class DatabaseCollector(Collector):
    """Gauges read from the database at each scrape."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("ladder_metrics_database_up", "1 if the scrape could read the database's figures.")
        try:
            metrics = list(self._read())
        except DatabaseError:
            logger.warning("metrics: the database's figures could not be read", exc_info=True)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from metrics

    def _read(self) -> Iterator[Metric]:
        now = timezone.now()
        searching = GaugeMetricFamily(
            "ladder_queue_searching", "Players searching now, by ladder and format.", labels=["ladder", "format"]
        )
        counts: dict[tuple[str, str], int] = defaultdict(int)
        rows = (
            QueueEntry.objects.filter(status=EntryStatus.WAITING)
            .values_list("ladder__slug", "formats")
            .annotate(n=Count("id"))
            .order_by()
        )
        for slug, formats, n in rows:
            for found in of_mask(formats):
                counts[(slug, found.code)] += n
        for (slug, code), n in sorted(counts.items()):
            searching.add_metric([slug, code], n)
        yield searching

        waits: dict[str, list[float]] = defaultdict(list)
        paired = QueueEntry.objects.filter(
            status=EntryStatus.MATCHED, joined_at__gte=now - PAIRING_LONGEST_SEARCH, ended_at__gte=now - PAIRING_WINDOW
        ).values_list("ladder__slug", "joined_at", "ended_at")
        for slug, joined, ended in paired:
            if ended is not None:
                waits[slug].append((ended - joined).total_seconds())
        wait = GaugeMetricFamily(
            "ladder_queue_wait_seconds",
            f"Wait from search to pairing of the pairings of the last {int(PAIRING_WINDOW.total_seconds() // 60)} "
            "minutes, by ladder: quantiles.",
            labels=["ladder", "quantile"],
        )
        pairings = GaugeMetricFamily(
            "ladder_queue_pairings_recent",
            f"Searches paired in the last {int(PAIRING_WINDOW.total_seconds() // 60)} minutes, by ladder.",
            labels=["ladder"],
        )
        for slug, values in sorted(waits.items()):
            values.sort()
            pairings.add_metric([slug], len(values))
            for q in QUANTILES:
                wait.add_metric([slug, str(q)], _quantile(values, q))
        yield wait
        yield pairings

        awaiting = GaugeMetricFamily(
            "ladder_matches_awaiting_confirmation",
            "Reported results awaiting confirmation, by ladder.",
            labels=["ladder"],
        )
        pending = (
            Match.objects.filter(status=MatchStatus.PENDING)
            .values_list("ladder__slug")
            .annotate(n=Count("id"))
            .order_by()
        )
        for slug, n in pending:
            awaiting.add_metric([slug], n)
        yield awaiting

        yield _by_status(
            "ladder_mail_notifications",
            "Notification mails by state: pending (to decide), queued (to send or retry), digest, failed.",
            Notification.objects.all(),
            "email_status",
            (EmailStatus.PENDING, EmailStatus.QUEUED, EmailStatus.DIGEST, EmailStatus.FAILED),
        )
        # One count each, so each reads its own partial index.
        hooks = GaugeMetricFamily(
            "ladder_webhook_deliveries", "Webhook deliveries pending (to send or retry) and failed.", labels=["status"]
        )
        for status in (DeliveryStatus.PENDING, DeliveryStatus.FAILED):
            hooks.add_metric([str(status)], WebhookDelivery.objects.filter(status=status).count())
        yield hooks
        yield _by_status(
            "ladder_replay_jobs",
            "Replay jobs not done: queued, running, failed.",
            ReplayJob.objects.all(),
            "status",
            (ReplayJobStatus.QUEUED, ReplayJobStatus.RUNNING, ReplayJobStatus.FAILED),
        )

        newest = WorkerHeartbeat.objects.aggregate(newest=Max("seen_at"))["newest"]
        if newest is not None:
            seen = GaugeMetricFamily(
                "ladder_celery_worker_seen_seconds_ago", "Seconds since a Celery worker last wrote its heartbeat."
            )
            seen.add_metric([], max(0.0, (now - newest).total_seconds()))
            yield seen


# -- The endpoint ---------------------------------------------------------------------------


class ReplicaCollector(Collector):
    """The read replica as this process last found it (``core.replica.check``), when there is one."""

    def collect(self) -> Iterator[Metric]:
        if not replica.configured():
            return
        health = replica.check()
        in_use = GaugeMetricFamily(
            "ladder_replica_in_use", "1 while the read replica serves its reads; 0 while the primary does."
        )
        in_use.add_metric([], 1 if health.usable else 0)
        yield in_use
        if health.lag_seconds is not None:
            lag = GaugeMetricFamily("ladder_replica_lag_seconds", "How far behind the primary the replica was.")
            lag.add_metric([], health.lag_seconds)
            yield lag


def metrics_enabled() -> bool:
    return bool(settings.METRICS_TOKEN or settings.METRICS_ALLOWED_ADDRESSES)


def _address_allowed(request: HttpRequest) -> bool:
    address = client_address(request)
    if address is None:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in settings.METRICS_ALLOWED_ADDRESSES)


def _token_given(request: HttpRequest) -> bool:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), settings.METRICS_TOKEN.encode())


def scrape() -> bytes:
    """The text exposition of every metric: the processes' counters, then the database's gauges."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        processes = generate_latest(registry)
    else:
        processes = generate_latest(REGISTRY)
    database = CollectorRegistry()
    database.register(DatabaseCollector())
    database.register(ReplicaCollector())
    return processes + generate_latest(database)


def metrics_view(request: HttpRequest) -> HttpResponse:
    if not metrics_enabled():
        return HttpResponse("Not found\n", status=404, content_type="text/plain")
    if settings.METRICS_ALLOWED_ADDRESSES and not _address_allowed(request):
        return HttpResponse("Not found\n", status=404, content_type="text/plain")
    if settings.METRICS_TOKEN and not _token_given(request):
        response = HttpResponse("A bearer token is required.\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(scrape(), content_type=CONTENT_TYPE_LATEST)
