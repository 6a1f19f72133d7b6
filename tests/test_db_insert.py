"""``core.db.insert_rows``: the rows a hot path writes in one prepared statement are the ORM's rows."""

from __future__ import annotations

import pytest
from django.utils import timezone

from core import db
from notifications.models import EmailStatus, Kind, Notification
from tests.factories import member

pytestmark = pytest.mark.django_db


def columns(row: Notification) -> dict:
    return {f.attname: getattr(row, f.attname) for f in Notification._meta.concrete_fields if not f.primary_key}


def test_insert_rows_writes_what_bulk_create_writes_and_skips_conflicts(ladder):
    a, b = member(ladder, "a"), member(ladder, "b")
    now = timezone.now()

    def made(key: str, recipient) -> Notification:
        data = {"ladder": ladder.name, "opponents": ["b"], "win_probability": 0.4721, "é": None}
        return Notification(
            recipient=recipient,
            kind=Kind.PAIRED,
            key=key,
            ladder=ladder,
            data=data,
            created_at=now,
            email_status=EmailStatus.PENDING,
        )

    db.insert_rows([made("match:1", a), made("match:1", b)])
    Notification.objects.bulk_create([made("match:2", a), made("match:2", b)])
    db.insert_rows([made("match:1", a)], ignore_conflicts=True)  # already there: nothing changes, no error

    written = {(r.recipient_id, r.key): columns(r) for r in Notification.objects.all()}
    assert len(written) == 4
    for recipient in (a.pk, b.pk):
        mine, orm = dict(written[recipient, "match:1"]), dict(written[recipient, "match:2"])
        mine.pop("key"), orm.pop("key")
        assert mine == orm
