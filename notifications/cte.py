"""The notifications table's part of other apps' statements: a match event's notifications.

A report or an answer on PostgreSQL writes its match and tells its players in one
statement of data-modifying CTEs (``ladder.matches.sql``, ``ladder.matches.answers_sql``).
The CTEs that write ``Notification`` rows are built here, so this app stays their only
writer (``notifications.services.notify`` is the ORM path): inserted once per recipient
and key (``ON CONFLICT DO NOTHING`` on the unique ``(recipient, kind, key)``), with the
mail status ``notify`` would give, and the notifications an answer makes read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from accounts.models import User
from notifications.models import EmailStatus, Notification

_NOTIFICATION = Notification._meta.db_table
_USER = User._meta.db_table
_INSERT = f"INSERT INTO {_NOTIFICATION} (recipient_id, kind, key, ladder_id, match_id, data, created_at, email_status)"


def new_notices_cte(*, match: Literal["new_match", "param"]) -> str:
    """``new_notices AS (…)``: insert a match event's notifications, to follow a CTE.

    With ``match="new_match"`` the match is the statement's own ``new_match`` CTE, the key
    ``match:<id>``, the recipients and their data two arrays (``%(n_recipient)s``,
    ``%(n_data)s``), and each one's mail status is read from their account; it returns
    each row's mail status. With ``match="param"`` the match is ``%(match)s``, the key
    ``%(n_key)s``, and the rows JSON (``%(notices)s``: recipient, data, mail status) in
    order; it returns the ids. The kind is ``%(n_kind)s``, the ladder ``%(ladder)s``.
    """
    if match == "new_match":
        return f"""new_notices AS (
    {_INSERT}
    SELECT n.recipient, %(n_kind)s, 'match:' || new_match.id, %(ladder)s, new_match.id, n.data, %(now)s,
           CASE WHEN u.is_active AND u.email <> '' AND lower(u.email) = lower(u.email_verified)
                THEN '{EmailStatus.PENDING.value}' ELSE '{EmailStatus.NONE.value}' END
    FROM new_match
    CROSS JOIN unnest(%(n_recipient)s::bigint[], %(n_data)s::jsonb[]) AS n(recipient, data)
    JOIN {_USER} u ON u.id = n.recipient
    ON CONFLICT DO NOTHING
    RETURNING email_status
)"""
    return f"""new_notices AS (
    {_INSERT}
    SELECT n.recipient, %(n_kind)s, %(n_key)s, %(ladder)s, %(match)s, n.data, %(now)s, n.status
    FROM ROWS FROM (jsonb_to_recordset(%(notices)s::jsonb) AS (recipient int8, data jsonb, status text))
         WITH ORDINALITY AS n(recipient, data, status, number)
    ORDER BY n.number
    ON CONFLICT DO NOTHING
    RETURNING id
)"""


def read_notices_cte(kinds: Iterable[str]) -> str:
    """``read_notices AS (…)``: mark read the notifications of these kinds about ``%(match)s``
    that ``%(read_for)s`` (an array of user ids) have not read, at ``%(now)s``."""
    return f"""read_notices AS (
    UPDATE {_NOTIFICATION} SET read_at = %(now)s
    WHERE match_id = %(match)s AND recipient_id = ANY(%(read_for)s) AND read_at IS NULL
      AND kind IN ({", ".join(f"'{kind}'" for kind in kinds)})
    RETURNING id
)"""
