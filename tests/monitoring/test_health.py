"""/healthz and /readyz: which check fails, and that a probe passes every gate a page has."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from monitoring.health import _State
from monitoring.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db
SWEEP = "Matchmaking queue sweep"


@pytest.fixture(autouse=True)
def _fresh_process() -> Iterator[None]:
    """Each test is a process that has not yet seen its migrations pass."""
    _State.migrations_applied = False
    yield
    _State.migrations_applied = False


@pytest.fixture
def running() -> None:
    """A worker reported just now and beat sent every periodic task just now."""
    now = timezone.now()
    WorkerHeartbeat.objects.create(hostname="celery@web1", seen_at=now)
    PeriodicTask.objects.update(last_run_at=now)


def probe(path: str, client: Client | None = None, **headers: str):
    return (client or Client()).get(path, HTTP_HOST="10.0.0.5:8000", **headers)


def test_healthz_answers_without_touching_the_database(django_assert_num_queries):
    with django_assert_num_queries(0):
        response = probe("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


def test_readyz_passes_every_check_of_a_running_deployment(running):
    response = probe("/readyz")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "migrations", "redis", "worker", "beat"}
    assert all(check["ok"] and check["ms"] >= 0 for check in body["checks"].values())


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_a_probe_by_address_over_http_is_neither_redirected_nor_refused(path, running, settings, moderator):
    """HTTPS redirect on, a Host not in ALLOWED_HOSTS, a staff session that owes a second factor."""
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["ladder.example.org"]
    settings.TWO_FACTOR_FOR_STAFF = True
    signed_in = Client()
    signed_in.force_login(moderator)

    for client in (Client(), signed_in):
        response = probe(path, client)

        assert response.status_code == 200, (path, response.status_code)
        assert "Set-Cookie" not in response.headers
        assert response.cookies == {}


def test_a_probe_allows_only_get_and_head(running):
    assert Client().head("/readyz").status_code == 200
    refused = Client().post("/readyz")
    assert refused.status_code == 405
    assert refused["Allow"] == "GET, HEAD"


def test_a_silent_worker_fails_readiness_naming_it(running):
    WorkerHeartbeat.objects.update(seen_at=timezone.now() - timedelta(minutes=12, seconds=5))

    response = probe("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    assert body["checks"]["worker"] == {
        "ok": False,
        "ms": body["checks"]["worker"]["ms"],
        "detail": "no worker seen for 12 minutes",
    }
    assert [name for name, check in body["checks"].items() if not check["ok"]] == ["worker"]


def test_no_worker_ever_seen_fails_readiness(running):
    WorkerHeartbeat.objects.all().delete()

    body = probe("/readyz").json()

    assert body["checks"]["worker"]["detail"] == "no worker has reported yet"


def test_a_stopped_beat_fails_readiness_naming_the_overdue_task(running):
    # The sweep runs every 15 s: last sent 10 minutes ago, it has been due for 9 minutes 45 s.
    PeriodicTask.objects.filter(name=SWEEP).update(last_run_at=timezone.now() - timedelta(minutes=10))

    response = probe("/readyz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["beat"]["ok"] is False
    assert checks["beat"]["detail"] == f"the periodic task “{SWEEP}” has been due for 9 minutes"
    assert [name for name, check in checks.items() if not check["ok"]] == ["beat"]


def test_a_paused_periodic_task_is_not_overdue(running):
    PeriodicTask.objects.filter(name=SWEEP).update(last_run_at=timezone.now() - timedelta(days=3), enabled=False)

    assert probe("/readyz").status_code == 200


def test_a_task_never_run_counts_from_its_last_change(running):
    """As django-celery-beat does: a new task is due one period after it was made."""
    PeriodicTask.objects.filter(name=SWEEP).update(last_run_at=None, date_changed=timezone.now() - timedelta(hours=1))

    assert probe("/readyz").json()["checks"]["beat"]["ok"] is False


def test_a_migration_not_applied_fails_readiness_naming_it(running):
    MigrationRecorder(connection).migration_qs.filter(app="monitoring", name="0001_initial").delete()

    response = probe("/readyz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["migrations"]["ok"] is False
    assert checks["migrations"]["detail"] == "1 not applied: monitoring.0001_initial"


def test_the_migrations_are_read_once_per_process_once_they_pass(running, django_assert_max_num_queries):
    assert probe("/readyz").status_code == 200
    with django_assert_max_num_queries(4):  # SELECT 1, the worker's heartbeat, the periodic tasks
        assert probe("/readyz").status_code == 200


def test_checks_turned_off_are_left_out(running, settings):
    settings.READY_WORKER_MINUTES = 0
    settings.READY_BEAT_MINUTES = 0

    assert set(probe("/readyz").json()["checks"]) == {"database", "migrations", "redis"}


def test_the_embedded_default_checks_what_applies_to_it(settings):
    """SQLite's place is taken by the test database; no broker, no shared cache, tasks run eagerly,
    and ``manage.py serve`` runs the periodic tasks (so beat is checked, the worker is not)."""
    settings.CELERY_BROKER_URL = "memory://localhost/"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    PeriodicTask.objects.update(last_run_at=timezone.now())

    response = probe("/readyz")

    assert response.status_code == 200
    assert set(response.json()["checks"]) == {"database", "migrations", "beat"}
