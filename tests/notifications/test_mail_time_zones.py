"""Mails write times in the recipient's zone, whoever's request or task sends them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from notifications.mail import digests_send
from notifications.models import Kind
from notifications.services import notify
from tests.notifications.test_mail_sending import text_and_html, verify

pytestmark = pytest.mark.django_db

DEADLINE = datetime(2026, 12, 1, 3, 30, tzinfo=UTC)  # 22:30 on 30 Nov in New York, 04:30 on 1 Dec in Berlin


def awaiting(recipient, ladder, key: str) -> None:
    data = {"reporter": "carol", "result": "a win for carol", "ladder": "Chess", "ladder_slug": ladder.slug}
    notify(Kind.RESULT_AWAITING, [recipient.pk], key=key, data={**data, "deadline": DEADLINE.isoformat()})


def test_each_recipient_reads_a_deadline_in_their_own_zone(
    smtp_server, player, opponent, ladder, django_capture_on_commit_callbacks
):
    for user, zone in ((player, "America/New_York"), (opponent, "Europe/Berlin")):
        user.time_zone = zone
        user.save(update_fields=["time_zone"])
        verify(user)

    with timezone.override(ZoneInfo("Asia/Tokyo")), django_capture_on_commit_callbacks(execute=True):
        awaiting(player, ladder, "match:1")  # sent from a request in yet another zone
        awaiting(opponent, ladder, "match:2")

    mails = {mail["To"]: text_and_html(mail) for mail in smtp_server.wait_for(2)}
    for part in mails["alice@example.org"]:
        assert "Confirm or dispute it by 30 Nov 2026, 22:30 EST;" in part
    for part in mails["bob@example.org"]:
        assert "Confirm or dispute it by 1 Dec 2026, 04:30 CET;" in part
    assert timezone.get_current_timezone_name() == "UTC"


def test_the_digest_lists_each_notification_at_the_recipients_time(
    smtp_server, player, ladder, django_capture_on_commit_callbacks
):
    player.time_zone = "Europe/Berlin"
    player.save(update_fields=["time_zone"])
    verify(player)
    made = DEADLINE - timedelta(hours=6)  # 21:30 UTC on 30 Nov: 22:30 in Berlin
    data = {"ladder": "Chess", "result": "game 1", "opponents": ["bob"], "rating": 1501, "delta": 1}
    with django_capture_on_commit_callbacks(execute=True):
        notify(Kind.RATED, [player.pk], key="match:1", data=data, now=made)
    with django_capture_on_commit_callbacks(execute=True):
        assert digests_send() == (1, 1)

    [mail] = smtp_server.wait_for(1)
    text, html = text_and_html(mail)
    assert "(30 Nov 2026, 22:30 CET)" in text
    assert "30 Nov 2026, 22:30 CET" in html and "<time" not in html
