"""Two workers (here eight) at once never mail one notification twice."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import pytest
from django.db import connection
from django.utils import timezone

from notifications.mail import digests_send, mails_send_pending
from notifications.models import EmailStatus, Kind, Notification
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 8


def at_once(work: Callable[[], object]) -> None:
    """Run ``work`` in ``THREADS`` threads, each with its own database connection, started together."""
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def worker() -> None:
        barrier.wait()
        try:
            work()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def players(count: int) -> list:
    return [
        UserFactory(username=f"racer{n}", email=f"racer{n}@example.org", email_verified=f"racer{n}@example.org")
        for n in range(count)
    ]


def pending(users, per_user: int, kind: str, status: str) -> None:
    now = timezone.now()
    Notification.objects.bulk_create(
        Notification(
            recipient=user,
            kind=kind,
            key=f"match:{n}",
            data={"ladder": f"L{n}", "result": f"game {n}"},
            created_at=now,
            email_status=status,
        )
        for user in users
        for n in range(per_user)
    )


def test_concurrent_runs_mail_each_notification_once(smtp_server):
    users = players(4)
    pending(users, 12, Kind.DISPUTED, EmailStatus.PENDING)  # 48 mails wanted at once

    at_once(lambda: mails_send_pending(batch=5))

    mails = smtp_server.wait_for(48)
    sent = Counter((str(mail["To"]), str(mail["Subject"])) for mail in mails)
    assert len(sent) == 48 and set(sent.values()) == {1}, sent.most_common(3)
    assert len(smtp_server.messages) == 48
    assert set(Notification.objects.values_list("email_status", flat=True)) == {EmailStatus.SENT}


def test_concurrent_digest_runs_mail_each_player_once(smtp_server):
    users = players(3)
    pending(users, 5, Kind.RATED, EmailStatus.DIGEST)

    at_once(digests_send)

    mails = smtp_server.wait_for(3)
    assert sorted(str(mail["To"]) for mail in mails) == [f"racer{n}@example.org" for n in range(3)]
    assert all(str(mail["Subject"]) == "5 notifications on Ladder" for mail in mails)
    assert len(smtp_server.messages) == 3
    assert set(Notification.objects.values_list("email_status", flat=True)) == {EmailStatus.SENT}
