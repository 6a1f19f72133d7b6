"""A notification's mail is ``sent`` only once the SMTP server took it; what failed is tried
again by the mail sweep and shown to moderators. Against a real SMTP server on loopback
(``smtp_server``), which refuses when told to, and a port where nothing listens."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from notifications.mail import MAX_ATTEMPTS, digests_send, mails_send_pending, retry_wait
from notifications.models import EmailStatus, Kind, Notification
from notifications.services import notify

pytestmark = pytest.mark.django_db
CHANGELIST = "admin:notifications_notification_changelist"


@pytest.fixture
def verified(player):
    player.email_verified = player.email
    player.save(update_fields=["email_verified"])
    return player


def disputed(player, key: str = "match:1") -> Notification:
    """A notification wanted by mail at once by default."""
    notify(Kind.DISPUTED, [player.pk], key=key, data={"ladder": "Chess", "by": "bob", "result": "a win for bob"})
    return Notification.objects.get(recipient=player, key=key)


@pytest.fixture
def closed_port(settings):
    """The site's mail goes to a loopback port where nothing listens (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 2
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    return port


def test_a_mail_the_server_refused_for_now_is_not_sent_and_the_sweep_sends_it_later(smtp_server, verified):
    smtp_server.refusals.append("451 4.7.1 greylisted, try again later")
    row = disputed(verified)
    now = timezone.now()

    run = mails_send_pending(now=now)

    row.refresh_from_db()
    assert (run.sent, run.retrying) == (0, 1)
    assert row.email_status == EmailStatus.QUEUED and row.emailed_at is None
    assert row.email_attempts == 1 and row.email_error == "451 4.7.1 greylisted, try again later"
    assert row.email_retry_at == now + retry_wait(1)
    assert mails_send_pending(now=now + timedelta(seconds=30)).sent == 0, "not before its wait is over"

    later = now + retry_wait(1)
    assert mails_send_pending(now=later).sent == 1

    [mail] = smtp_server.wait_for(1)
    assert mail["To"] == verified.email
    row.refresh_from_db()
    assert row.email_status == EmailStatus.SENT and row.emailed_at == later and row.email_error == ""


def test_a_recipient_refused_for_good_fails_at_once(smtp_server, verified):
    smtp_server.refusals.append("550 5.1.1 no such user")
    row = disputed(verified)

    run = mails_send_pending()

    row.refresh_from_db()
    assert run.failed == 1
    assert row.email_status == EmailStatus.FAILED and row.email_retry_at is None
    assert row.email_error == "550 5.1.1 no such user"
    assert smtp_server.messages == []


def test_a_server_away_past_every_retry_fails_the_mail_and_never_says_sent(closed_port, verified):
    row = disputed(verified)
    now = timezone.now()

    for attempt in range(1, MAX_ATTEMPTS + 1):
        run = mails_send_pending(now=now)
        row.refresh_from_db()
        assert row.email_attempts == attempt
        assert "ConnectionRefusedError" in row.email_error
        if attempt < MAX_ATTEMPTS:
            assert (row.email_status, run.retrying) == (EmailStatus.QUEUED, 1)
            now = row.email_retry_at
    assert row.email_status == EmailStatus.FAILED and row.emailed_at is None
    assert mails_send_pending(now=now + timedelta(days=1)).as_dict()["failed"] == 0, "given up: not tried again"


def test_a_digest_the_server_refused_stays_and_the_sweep_sends_it_later(smtp_server, verified):
    notify(Kind.RATED, [verified.pk], key="match:1", data={"ladder": "Chess", "result": "a win", "rating": 1510})
    mails_send_pending()  # kept for the digest
    smtp_server.refusals.append("421 4.3.2 shutting down, try later")
    now = timezone.now()

    assert digests_send(now=now) == (0, 0)

    row = Notification.objects.get(recipient=verified)
    assert row.email_status == EmailStatus.DIGEST and row.email_attempts == 1
    assert row.email_error.startswith("421")
    mails_send_pending(now=now + retry_wait(1))  # the every-minute run tries the digest again
    assert len(smtp_server.wait_for(1)) == 1
    row.refresh_from_db()
    assert row.email_status == EmailStatus.SENT


def test_moderators_see_failed_mails_counted_and_send_them_again(smtp_server, verified, client, moderator):
    smtp_server.refusals.append("550 5.1.1 no such user")
    row = disputed(verified)
    mails_send_pending()
    client.force_login(moderator)

    page = client.get(reverse(CHANGELIST))
    failed = client.get(reverse(CHANGELIST), {"mail_trouble": "failed"})

    assert "Failed (1)" in page.text and "To be tried again (0)" in page.text
    assert "550 5.1.1 no such user" in failed.text
    assert failed.context["cl"].result_count == 1

    retried = client.post(reverse(CHANGELIST), {"action": "retry_mail", "_selected_action": [row.pk]}, follow=True)
    assert "1 failed mails queued to be sent again." in retried.text
    assert mails_send_pending().sent == 1
    assert smtp_server.wait_for(1)[0]["To"] == verified.email
