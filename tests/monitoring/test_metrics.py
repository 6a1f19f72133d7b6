"""/metrics: off by default, behind a token or an address list, and what a scrape shows after traffic."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from matchmaking.tasks import sweep_queue_task
from monitoring.models import WorkerHeartbeat
from tests.api.conftest import report_body
from tests.factories import member

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parent.parent.parent
TOKEN = "s3cret-metrics-token"
SIGNUP = {"username": "Newcomer_1", "email": "", "password1": "a-long-unusual-pass", "password2": "a-long-unusual-pass"}


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(scraped: dict, name: str, **labels: str) -> float:
    return scraped.get((name, frozenset(labels.items())), 0.0)


def scrape(client: Client | None = None) -> dict:
    response = (client or Client()).get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"].startswith("text/plain; version=")
    return samples(response.text)


@pytest.fixture
def metrics_on(settings) -> None:
    settings.METRICS_TOKEN = TOKEN


def test_metrics_are_off_by_default(settings):
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_ADDRESSES = []

    for headers in ({}, {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}):
        assert Client().get("/metrics", **headers).status_code == 404


def test_a_scrape_without_the_token_is_refused(metrics_on):
    for header in (None, "Bearer wrong", f"Basic {TOKEN}", TOKEN):
        headers = {"HTTP_AUTHORIZATION": header} if header else {}
        response = Client().get("/metrics", **headers)

        assert response.status_code == 401, header
        assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
        assert "ladder_" not in response.text


def test_an_address_list_answers_only_those_addresses(settings):
    from ipaddress import ip_network

    settings.METRICS_ALLOWED_ADDRESSES = [ip_network("10.0.0.0/8")]

    assert Client(REMOTE_ADDR="10.20.30.40").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="192.0.2.7").get("/metrics").status_code == 404


def test_with_both_a_token_and_addresses_both_are_required(settings):
    from ipaddress import ip_network

    settings.METRICS_TOKEN = TOKEN
    settings.METRICS_ALLOWED_ADDRESSES = [ip_network("10.0.0.5")]
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}

    assert Client(REMOTE_ADDR="10.0.0.5").get("/metrics", **bearer).status_code == 200
    assert Client(REMOTE_ADDR="10.0.0.5").get("/metrics").status_code == 401
    assert Client(REMOTE_ADDR="10.0.0.6").get("/metrics", **bearer).status_code == 404


def test_a_scrape_after_traffic_shows_each_series(metrics_on, ladder, player, opponent, client_for, celery_eager):
    bystander = member(ladder, "carol")
    before = scrape()
    queue = f"/api/v1/ladders/{ladder.slug}/queue/"

    assert Client().post(reverse("accounts:signup"), SIGNUP).status_code == 302
    assert Client().get("/no/such/page/").status_code == 404
    a, b = client_for(player), client_for(opponent)
    assert a.post(queue, {}, format="json").status_code == 201
    assert b.post(queue, {}, format="json").status_code == 201
    assert a.get(queue).json()["status"] == "matched"
    assert client_for(bystander).post(queue, {"formats": ["1v1"]}, format="json").status_code == 201
    assert a.post("/api/v1/matches/", report_body(ladder, b="carol"), format="json").status_code == 201
    sweep_queue_task.delay()
    after = scrape()

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("ladder_http_requests_total", view="accounts:signup", method="POST", status="302") == 1
    assert grew("ladder_http_requests_total", view="api:queue", method="POST", status="201") == 3
    assert grew("ladder_http_requests_total", view="api:matches", method="POST", status="201") == 1
    assert grew("ladder_http_requests_total", view="<unresolved>", method="GET", status="404") == 1
    assert grew("ladder_http_request_duration_seconds_count", view="api:queue") == 4
    assert 0 < grew("ladder_http_request_duration_seconds_sum", view="api:queue") < 30
    assert grew("ladder_http_request_duration_seconds_bucket", view="api:queue", le="+Inf") == 4
    assert not any(name == "ladder_http_requests_total" and "/api/" in str(labels) for name, labels in after)

    assert value(after, "ladder_queue_searching", ladder="chess", format="1v1") == 1  # carol; alice and bob paired
    assert value(after, "ladder_queue_pairings_recent", ladder="chess") == 2  # both of the pair's searches
    assert 0 <= value(after, "ladder_queue_wait_seconds", ladder="chess", quantile="0.5") < 30
    assert value(after, "ladder_matches_awaiting_confirmation", ladder="chess") == 1
    assert grew("ladder_celery_task_runs_total", task="matchmaking.tasks.sweep_queue_task", outcome="success") == 1
    assert grew("ladder_celery_task_duration_seconds_count", task="matchmaking.tasks.sweep_queue_task") == 1
    for status in ("pending", "queued", "digest", "failed"):
        assert ("ladder_mail_notifications", frozenset({("status", status)})) in after
    assert value(after, "ladder_webhook_deliveries", status="failed") == 0
    assert value(after, "ladder_replay_jobs", status="queued") == 0
    assert value(after, "ladder_metrics_database_up") == 1
    assert not [name for name, _ in after if name.startswith("ladder_replica_")]  # no replica set
    assert grew("ladder_http_requests_total", view="<unresolved>", method="GET", status="200") == 0  # scrapes


def test_the_database_gauges_take_a_few_queries_whatever_the_traffic(
    metrics_on, ladder, player, opponent, client_for, django_assert_max_num_queries
):
    client_for(player).post(f"/api/v1/ladders/{ladder.slug}/queue/", {}, format="json")
    with django_assert_max_num_queries(8):
        scrape()


def dashboard_metrics() -> set[str]:
    dashboard = json.loads((ROOT / "deploy" / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert exprs
    return {name for expr in exprs for name in re.findall(r"\bladder_[a-z_]+", expr)}


def test_the_grafana_dashboard_names_only_metrics_a_scrape_has(
    metrics_on, ladder, player, opponent, client_for, celery_eager
):
    queue = f"/api/v1/ladders/{ladder.slug}/queue/"
    client_for(player).post(queue, {}, format="json")
    client_for(opponent).post(queue, {}, format="json")
    client_for(player).get(queue)  # paired: a wait from search to pairing
    client_for(member(ladder, "carol")).post(queue, {}, format="json")  # searching
    client_for(player).post("/api/v1/matches/", report_body(ladder), format="json")
    sweep_queue_task.delay()
    WorkerHeartbeat.objects.create(hostname="celery@worker", seen_at=timezone.now())
    scraped = {name for name, _ in scrape()}

    assert dashboard_metrics() - scraped == set()
