"""The login page and the lockout: the site's own name, and warnings that say what is locked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db
URL = reverse("accounts:login")


def login(client, username, password, ip="198.51.100.7"):
    return client.post(URL, {"username": username, "password": password}, REMOTE_ADDR=ip)


def brand_places(html):
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    brand = re.search(r'<a class="brand"[^>]*>(.*?)</a>', html, re.S).group(1)
    footer = re.search(r'<footer class="site-footer">(.*?)</footer>', html, re.S).group(1)
    return title, brand, footer


@pytest.mark.parametrize("name", ["accounts:login", "accounts:password_reset", "accounts:password_reset_done"])
def test_auth_pages_name_the_site_not_the_host(client, name):
    html = client.get(reverse(name), HTTP_HOST="127.0.0.1").text

    for place in brand_places(html):
        assert django_settings.SITE_NAME in place
        assert "127.0.0.1" not in place


def test_password_change_names_the_site(client, player):
    client.force_login(player)
    html = client.get(reverse("accounts:password_change"), HTTP_HOST="127.0.0.1").text

    for place in brand_places(html):
        assert django_settings.SITE_NAME in place


def test_no_page_template_reads_site_name():
    """Django's auth views set ``site_name`` to the host: pages read ``brand_name``."""
    root = Path(django_settings.BASE_DIR) / "templates"
    readers = [
        str(path.relative_to(root))
        for path in root.rglob("*.html")
        if "site_name" in path.read_text() and path.relative_to(root).parts[0] != "mail"
    ]
    assert readers == []


def test_no_warning_while_far_from_the_limit(client, player):
    assert "One more failed attempt" not in login(client, "alice", "wrong").text


def test_one_attempt_before_the_account_limit_warns(client, player, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 2):
        assert "One more failed attempt" not in login(client, "alice", "wrong").text

    last = login(client, "Alice", "wrong")

    assert last.status_code == 200
    assert "One more failed attempt locks this account for this address for 15\xa0minutes." in last.text


def test_one_attempt_before_the_address_limit_warns(client, opponent, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 4
    for attempt in range(2):
        login(client, f"nobody{attempt}", "wrong")

    last = login(client, "someone-else", "wrong")

    assert "One more failed attempt locks this address for 15\xa0minutes, for every account." in last.text


def test_account_lock_says_this_account_for_this_address(client, player, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        login(client, "alice", "wrong")

    locked = login(client, "alice", PASSWORD)

    assert locked.status_code == 429
    assert "This account is locked for this address" in locked.text
    assert "This address is locked" not in locked.text
    assert "15\xa0minutes" in locked.text
    assert "0:15:00" not in locked.text


def test_address_lock_says_this_address(client, player, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 4
    for attempt in range(4):
        login(client, f"nobody{attempt}", "wrong")

    locked = login(client, "alice", PASSWORD)

    assert locked.status_code == 429
    assert "This address is locked" in locked.text
    assert "this account" not in locked.text.lower().replace("other accounts", "")
    assert "0:15:00" not in locked.text
