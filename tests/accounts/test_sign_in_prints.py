"""accounts.prints: each sign-in keeps a keyed hash of its address and browser, never the address."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessLog
from django.urls import reverse
from django.utils import timezone

from accounts.models import PrintKind, SignInPrint
from accounts.prints import accounts_sharing, print_digest
from accounts.tasks import expire_login_attempts_task
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
URL = reverse("accounts:login")
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Version/17.5 Mobile/15E148 Safari/604.1"


def sign_in(client, username, ip="198.51.100.7", agent=FIREFOX, password=PASSWORD, **extra):
    client.logout()
    return client.post(
        URL, {"username": username, "password": password}, REMOTE_ADDR=ip, HTTP_USER_AGENT=agent, **extra
    )


def prints_of(user):
    return {(p.kind, p.digest): p.count for p in SignInPrint.objects.filter(user=user)}


def test_a_sign_in_keeps_keyed_hashes_of_its_address_and_browser_and_no_raw_address(client, player):
    assert sign_in(client, "alice").status_code == 302

    rows = list(SignInPrint.objects.filter(user=player))
    assert {(p.kind, p.digest) for p in rows} == {
        (PrintKind.ADDRESS, print_digest(PrintKind.ADDRESS, "198.51.100.7")),
        (PrintKind.DEVICE, print_digest(PrintKind.DEVICE, FIREFOX)),
    }
    assert all(len(p.digest) == 64 and "198.51" not in p.digest for p in rows)
    # Axes keeps no log of successful logins, which would hold the raw address.
    assert not AccessLog.objects.exists()


def test_the_hash_is_keyed_with_the_secret_key(settings):
    before = print_digest(PrintKind.ADDRESS, "198.51.100.7")
    settings.SECRET_KEY = "another-secret-key-for-this-test-only-0123456789"

    assert print_digest(PrintKind.ADDRESS, "198.51.100.7") != before


def test_a_known_print_is_counted_and_a_new_one_added(client, player):
    sign_in(client, "alice")
    sign_in(client, "alice")
    sign_in(client, "alice", ip="203.0.113.9")

    assert prints_of(player) == {
        (PrintKind.ADDRESS, print_digest(PrintKind.ADDRESS, "198.51.100.7")): 2,
        (PrintKind.ADDRESS, print_digest(PrintKind.ADDRESS, "203.0.113.9")): 1,
        (PrintKind.DEVICE, print_digest(PrintKind.DEVICE, FIREFOX)): 3,
    }


def test_a_failed_sign_in_leaves_no_print(client, player):
    assert sign_in(client, "alice", password="wrong").status_code == 200

    assert not SignInPrint.objects.exists()


def test_a_sign_in_without_a_user_agent_keeps_only_the_address(client, player):
    sign_in(client, "alice", agent="")

    assert [p.kind for p in SignInPrint.objects.filter(user=player)] == [PrintKind.ADDRESS]


def test_the_address_is_the_one_the_login_throttle_counts(client, player, settings):
    settings.PROXY_COUNT = 1
    sign_in(client, "alice", ip="10.0.0.2", HTTP_X_FORWARDED_FOR="1.2.3.4, 192.0.2.44")

    address = SignInPrint.objects.get(user=player, kind=PrintKind.ADDRESS)
    assert address.digest == print_digest(PrintKind.ADDRESS, "192.0.2.44")


def test_accounts_sharing_lists_the_others_with_the_kind_shared_addresses_first(client, player, opponent):
    carol = UserFactory(username="carol")
    UserFactory(username="dave")
    sign_in(client, "alice", ip="198.51.100.7", agent=FIREFOX)
    sign_in(client, "bob", ip="203.0.113.1", agent=FIREFOX)  # the same browser only
    sign_in(client, "carol", ip="198.51.100.7", agent=SAFARI)  # the same address only
    sign_in(client, "dave", ip="192.0.2.1", agent=SAFARI)  # nothing of alice's

    shared = accounts_sharing(user=player)

    assert [(s.user, s.kinds) for s in shared] == [(carol, (PrintKind.ADDRESS,)), (opponent, (PrintKind.DEVICE,))]
    assert accounts_sharing(user=player, kinds=[PrintKind.ADDRESS])[0].user == carol


def test_expired_login_attempts_are_deleted_by_the_periodic_task(client, player, settings):
    sign_in(client, "alice", password="wrong", ip="203.0.113.5")
    sign_in(client, "bob", password="wrong", ip="203.0.113.6")
    old = AccessAttempt.objects.get(ip_address="203.0.113.5")
    old.attempt_time = timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    old.save()

    expire_login_attempts_task.apply().get()

    # The expired one is gone with its raw address; the other still counts towards its lock.
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["203.0.113.6"]
