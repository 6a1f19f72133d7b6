"""Sign-ups per client address: counted before the password is hashed, refused with 429."""

from __future__ import annotations

import logging
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from accounts.models import User
from accounts.throttling import signup_take

pytestmark = pytest.mark.django_db
URL = reverse("accounts:signup")
REFUSED = "Too many accounts were made from your address recently. Try again in"


def sign_up(name: str, **meta):
    """A sign-up from a new browser (a signed-in one is sent home instead)."""
    data = {"username": name, "email": "", "password1": "a-long-unusual-pass", "password2": "a-long-unusual-pass"}
    return Client().post(URL, data, **meta)


@pytest.fixture
def two_per_hour(settings):
    settings.SIGNUP_RATE = "2/hour"


def test_sign_ups_over_the_rate_are_refused_with_retry_after(two_per_hour):
    assert sign_up("first", REMOTE_ADDR="203.0.113.5").status_code == 302
    assert sign_up("second", REMOTE_ADDR="203.0.113.5").status_code == 302

    refused = sign_up("third", REMOTE_ADDR="203.0.113.5")

    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert REFUSED in refused.text
    assert not User.objects.filter(username="third").exists()


def test_the_limit_is_per_address(two_per_hour):
    for name in ("first", "second", "third"):
        sign_up(name, REMOTE_ADDR="203.0.113.5")

    assert sign_up("elsewhere", REMOTE_ADDR="203.0.113.6").status_code == 302


def test_forms_with_mistakes_do_not_count(two_per_hour):
    for _ in range(3):
        assert sign_up("x", REMOTE_ADDR="203.0.113.5").status_code == 200  # too short a username

    assert sign_up("first", REMOTE_ADDR="203.0.113.5").status_code == 302
    assert sign_up("second", REMOTE_ADDR="203.0.113.5").status_code == 302


def test_the_sign_up_page_says_when_to_come_back(two_per_hour):
    sign_up("first", REMOTE_ADDR="203.0.113.5")
    sign_up("second", REMOTE_ADDR="203.0.113.5")

    page = Client().get(URL, REMOTE_ADDR="203.0.113.5")

    assert page.status_code == 200
    assert REFUSED in page.text


def test_clients_behind_the_proxies_are_told_apart(settings, two_per_hour):
    settings.PROXY_COUNT = 1
    for name in ("first", "second"):
        sign_up(name, REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.5")

    assert sign_up("third", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 429
    assert sign_up("fourth", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.6").status_code == 302


def test_concurrent_sign_ups_from_one_address_take_only_the_allowed_slots(settings):
    settings.SIGNUP_RATE = "5/hour"
    request = RequestFactory().post(URL, REMOTE_ADDR="203.0.113.5")

    with ThreadPoolExecutor(max_workers=8) as pool:
        waits = list(pool.map(lambda _: signup_take(request=request), range(40)))

    assert waits.count(0) == 5


def test_an_empty_rate_turns_the_limit_off(settings):
    settings.SIGNUP_RATE = None
    for name in ("first", "second", "third"):
        assert sign_up(name, REMOTE_ADDR="203.0.113.5").status_code == 302


def test_sign_ups_go_through_and_are_logged_when_the_cache_is_down(settings, two_per_hour, caplog):
    with socket.socket() as probe:  # a port nothing listens on: Redis is down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {"default": {"BACKEND": "core.cache.RedisCache", "LOCATION": f"redis://127.0.0.1:{port}/0"}}
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"

    with caplog.at_level(logging.WARNING):
        responses = [sign_up(name, REMOTE_ADDR="203.0.113.5").status_code for name in ("first", "second", "third")]

    assert responses == [302, 302, 302]
    assert User.objects.filter(username__in=["first", "second", "third"]).count() == 3
    assert any("cache" in record.getMessage().lower() for record in caplog.records)
