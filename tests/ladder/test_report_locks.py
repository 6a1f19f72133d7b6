"""A trusted report locks no row that every report shares (docs/operations.md, "Scaling").

A checked foreign key share-locks the row it names when the row referring to it is written.
A game server's reports all name one ladder and one reporter; were those keys checked, each
report would lock those two rows, and concurrent reports would share the locks through
multi-transactions, PostgreSQL's costliest kind of row lock. The players' rows stay checked:
the test shows the lock a checked key takes on them, and none on the ladder or the reporter.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from api.models import IdempotencyKey
from ladder.matches import reporting
from ladder.matches.checks import SideInput
from tests.factories import LadderFactory, UserFactory, member

pytestmark = pytest.mark.django_db(transaction=True)  # each report commits, and its checks run


def locker(table: str, pk: int) -> int:
    """The transaction that last locked or deleted the row (``xmax``), 0 if none did."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT xmax::text::bigint FROM {table} WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def test_a_trusted_report_locks_neither_the_ladder_nor_the_reporter():
    ladder = LadderFactory()
    server = UserFactory(username="gameserver", is_bot=True)
    ladder.trusted_reporters.add(server)
    alice, bob = member(ladder, "alice"), member(ladder, "bob")
    rows = {"ladder": ("ladder_ladder", ladder.pk), "server": ("accounts_user", server.pk)}
    rows |= {"alice": ("accounts_user", alice.pk), "bob": ("accounts_user", bob.pk)}
    before = {name: locker(*row) for name, row in rows.items()}

    reporting.match_report(ladder=ladder, reporter=server, sides=[SideInput([alice], 1), SideInput([bob], 2)])
    IdempotencyKey.objects.create(
        user=server, key=uuid.uuid4().hex, request_hash="0" * 64, response_status=201, response_body={}
    )
    after = {name: locker(*row) for name, row in rows.items()}

    # Checked keys: the report's participants locked their players' rows.
    assert after["alice"] != before["alice"] and after["bob"] != before["bob"]
    assert after["ladder"] == before["ladder"]
    assert after["server"] == before["server"]
