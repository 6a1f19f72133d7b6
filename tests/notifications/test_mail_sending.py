"""Notification mails through a real SMTP server on loopback: at once, as a digest, or not at all."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from config.celery import app
from notifications import preferences
from notifications.mail import digests_send, mails_send_pending
from notifications.models import EmailMode, EmailStatus, Kind, Notification
from notifications.services import notify
from notifications.tasks import send_digests_task, send_notification_mails_task

pytestmark = pytest.mark.django_db


def verify(user):
    user.email_verified = user.email
    user.save(update_fields=["email_verified"])
    return user


def text_and_html(mail) -> tuple[str, str]:
    return mail.get_body(("plain",)).get_content(), mail.get_body(("html",)).get_content()


def unsubscribe_link(mail) -> str:
    found = re.fullmatch(r"<(\S+)>", str(mail["List-Unsubscribe"]).strip())  # a long header is folded
    assert found, mail["List-Unsubscribe"]
    return found[1]


def awaiting(player, ladder, key: str = "match:1"):
    deadline = timezone.now() + timedelta(hours=24)
    data = {"reporter": "bob", "result": "a win for bob", "ladder": "Chess", "ladder_slug": ladder.slug}
    return notify(Kind.RESULT_AWAITING, [player.pk], key=key, data={**data, "deadline": deadline.isoformat()})


def test_a_verified_player_gets_a_mail_with_text_html_and_unsubscribe_headers(
    smtp_server, player, ladder, django_capture_on_commit_callbacks
):
    verify(player)

    with django_capture_on_commit_callbacks(execute=True):
        awaiting(player, ladder)

    [mail] = smtp_server.wait_for(1)
    assert smtp_server.recipients == [["alice@example.org"]]
    assert mail["Subject"] == "A result awaits your answer"
    text, html = text_and_html(mail)
    link = settings.SITE_URL + reverse("ladder:detail", args=[ladder.slug])
    for part in (text, html):
        assert "bob reported a win for bob in Chess. Confirm or dispute it by" in part
        assert link in part
        assert "You get this mail because mails about “A result awaits your answer” come at once" in part
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    url = unsubscribe_link(mail)
    assert url.startswith(f"{settings.SITE_URL}/notifications/unsubscribe/")
    assert url in text and url in html, "the unsubscribe link is visible too"
    row = Notification.objects.get(recipient=player)
    assert row.email_status == EmailStatus.SENT and row.emailed_at is not None


def test_the_mails_unsubscribe_link_works_without_login(
    smtp_server, player, ladder, django_capture_on_commit_callbacks
):
    verify(player)
    with django_capture_on_commit_callbacks(execute=True):
        awaiting(player, ladder, key="match:1")
    path = urlsplit(unsubscribe_link(smtp_server.wait_for(1)[0])).path
    anonymous = Client(enforce_csrf_checks=True)

    assert "Stop mails about “A result awaits your answer” to alice?" in anonymous.get(path).text
    assert preferences.modes_for([player.pk])[player.pk][Kind.RESULT_AWAITING] == EmailMode.INSTANT
    one_click = anonymous.post(path, "List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded")
    assert one_click.status_code == 200
    assert preferences.modes_for([player.pk])[player.pk][Kind.RESULT_AWAITING] == EmailMode.OFF

    with django_capture_on_commit_callbacks(execute=True):
        awaiting(player, ladder, key="match:2")

    assert Notification.objects.get(key="match:2").email_status == EmailStatus.SKIPPED
    assert len(smtp_server.messages) == 1, "the next notification of that kind sends no mail"


def test_an_unverified_player_gets_no_mail(smtp_server, player, ladder, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        awaiting(player, ladder)
        send_notification_mails_task.delay()

    assert Notification.objects.get(recipient=player).email_status == EmailStatus.NONE
    assert smtp_server.messages == []


def test_an_address_changed_after_the_notification_gets_no_mail(
    smtp_server, player, ladder, django_capture_on_commit_callbacks
):
    verify(player)
    awaiting(player, ladder)  # pending; its kick waits for a commit that never comes in this test
    player.email = "new-address@example.org"
    player.save(update_fields=["email"])

    with django_capture_on_commit_callbacks(execute=True):
        run = mails_send_pending()

    assert (run.sent, run.skipped) == (0, 1)
    assert Notification.objects.get(recipient=player).email_status == EmailStatus.SKIPPED
    assert smtp_server.messages == []


def rated(player, n: int, now):
    data = {"ladder": "Chess", "result": f"game {n}", "opponents": ["bob"], "rating": 1500 + n, "delta": n}
    notify(Kind.RATED, [player.pk], key=f"match:{n}", data=data, now=now - timedelta(hours=10 - n))


def test_digest_rows_come_as_one_mail_newest_first(smtp_server, player, django_capture_on_commit_callbacks):
    verify(player)
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        for n in (1, 2, 3):
            rated(player, n, now)

    assert smtp_server.messages == [], "rated matches come in the daily digest by default"
    assert set(Notification.objects.values_list("email_status", flat=True)) == {EmailStatus.DIGEST}

    with django_capture_on_commit_callbacks(execute=True):
        assert send_digests_task.delay().get() == {"mails": 1, "rows": 3}
    with django_capture_on_commit_callbacks(execute=True):
        assert digests_send() == (0, 0), "a second run mails nobody"

    [mail] = smtp_server.wait_for(1)
    assert mail["Subject"] == f"3 notifications on {settings.SITE_NAME}"
    text, html = text_and_html(mail)
    assert text.index("game 3") < text.index("game 2") < text.index("game 1")
    assert "Your rating is now 1503 (+3)." in html
    url = unsubscribe_link(mail)
    assert url in text and mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert preferences.unsubscribe_read(urlsplit(url).path.split("/")[-2]) == (player.pk, preferences.DIGEST)
    assert set(Notification.objects.values_list("email_status", flat=True)) == {EmailStatus.SENT}


def test_a_long_digest_lists_the_newest_and_links_to_the_rest(smtp_server, player, django_capture_on_commit_callbacks):
    verify(player)
    now = timezone.now()
    for n in (1, 2, 3):
        rated(player, n, now)
    mails_send_pending()

    with django_capture_on_commit_callbacks(execute=True):
        assert digests_send(cap=2) == (1, 3)

    text, _ = text_and_html(smtp_server.wait_for(1)[0])
    assert "game 3" in text and "game 2" in text and "game 1" not in text
    assert f"… and 1 more. All your notifications: {settings.SITE_URL}/notifications/" in text
    assert not Notification.objects.exclude(email_status=EmailStatus.SENT).exists()


def test_a_kind_turned_off_before_the_digest_is_not_sent(smtp_server, player, django_capture_on_commit_callbacks):
    verify(player)
    rated(player, 1, timezone.now())
    mails_send_pending()
    preferences.unsubscribe(user_id=player.pk, scope=Kind.RATED)

    with django_capture_on_commit_callbacks(execute=True):
        assert digests_send() == (0, 0)

    assert smtp_server.messages == []
    assert Notification.objects.get().email_status == EmailStatus.SKIPPED


def test_a_run_with_nothing_to_do_is_three_queries(player):
    with CaptureQueriesContext(connection) as queries:
        run = mails_send_pending()

    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert run.batches == 0
    # Pending rows to decide, queued mails due, digests to try again: the first two claim rows.
    assert len(statements) == 3, statements
    assert "SKIP LOCKED" in statements[0] and "SKIP LOCKED" in statements[1], statements


def test_beat_runs_both_tasks():
    mails = PeriodicTask.objects.get(task="notifications.tasks.send_notification_mails_task")
    digests = PeriodicTask.objects.get(task="notifications.tasks.send_digests_task")

    assert mails.interval is not None and digests.crontab is not None
    assert (mails.interval.every, mails.interval.period) == (1, "minutes")
    assert (digests.crontab.hour, digests.crontab.minute, str(digests.crontab.timezone)) == ("7", "0", "UTC")
    assert {mails.task, digests.task} <= set(app.tasks)
