"""Rate limits hold under concurrent requests: the count is atomic in Redis.

DRF's throttle reads the client's list of request times from the cache, checks it and
writes it back; requests arriving together each read the same list, and each wrote back
its own (8 concurrent clients got 1,486 requests through a 1,200/minute limit).
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connections
from django.test import override_settings
from rest_framework.test import APIClient

from api.services import token_create

pytestmark = pytest.mark.django_db(transaction=True)  # the threads' connections see the token

THREADS = 8
REQUESTS_EACH = 20
LIMIT = 50


@override_settings(API_THROTTLE_RATES={"anon": None, "user": None, "token": f"{LIMIT}/minute", "search": None})
def test_concurrent_requests_never_get_past_the_limit(player, ladder):
    _, secret = token_create(user=player, name="bot", read_only=True)
    statuses: Counter[int] = Counter()
    retry_after: set[str | None] = set()
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def hammer() -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        start.wait()
        try:
            for _ in range(REQUESTS_EACH):
                response = client.get("/api/v1/ladders/")
                with lock:
                    statuses[response.status_code] += 1
                    if response.status_code == 429:
                        retry_after.add(response.headers.get("Retry-After"))
        except BaseException as exc:  # reported by the test below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=hammer) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert statuses == {200: LIMIT, 429: THREADS * REQUESTS_EACH - LIMIT}
    assert None not in retry_after
    assert all(0 < int(value) <= 60 for value in retry_after)  # type: ignore[arg-type]
