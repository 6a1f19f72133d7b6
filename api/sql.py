"""The API's hand-written statements: PostgreSQL runs them, other databases their ORM twins.

Each statement runs on a hot path of a report or of every authenticated request, through
``core.db.prepared_cursor`` (prepared once per connection). ``api.store`` runs each and
holds its ORM twin, behind ``core.db.on_postgresql()``:

- ``LIVE_TOKEN``: ``api.store.live_token``, the token, its user and their permissions;
- ``LADDER_BY_SLUG`` and ``USERS_BY_USERNAME``: ``api.store.ladder_by_slug`` and
  ``users_by_username``, a ladder (and whether it has match fields) and users by name;
  ``REPORT_ROWS``: ``api.store.report_rows``, both at once, for a report;
- ``IDEMPOTENCY_STORE``: ``api.store.idempotency_store``, a report's key with its response.

A row becomes a model instance with ``core.db.instance`` and the ``*_FIELDS`` names below,
in the order the statement selects the columns.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType

from accounts.models import User
from api.models import ApiToken, IdempotencyKey
from core import db
from ladder.models import Ladder, MatchField

TOKEN_FIELDS, _TOKEN_COLUMNS = db.column_list(ApiToken, "t")
USER_FIELDS, _USER_COLUMNS = db.column_list(User, "u")
LADDER_FIELDS, _LADDER_COLUMNS = db.column_list(Ladder, "l")

_UserPermission = User.user_permissions.through
_UserGroup = User.groups.through

# The live token of an active user with this hash: the token's columns, the user's, then
# the user's permissions (their own and their groups') as "app_label.codename".
LIVE_TOKEN = f"""
    SELECT {_TOKEN_COLUMNS}, {_USER_COLUMNS},
        ARRAY(
            SELECT ct.app_label || '.' || p.codename
            FROM {Permission._meta.db_table} p JOIN {ContentType._meta.db_table} ct ON ct.id = p.content_type_id
            WHERE p.id IN (
                SELECT up.permission_id FROM {_UserPermission._meta.db_table} up WHERE up.user_id = u.id
                UNION ALL
                SELECT gp.permission_id
                FROM {Group.permissions.through._meta.db_table} gp
                JOIN {_UserGroup._meta.db_table} ug ON ug.group_id = gp.group_id
                WHERE ug.user_id = u.id
            )
        )
    FROM {ApiToken._meta.db_table} t JOIN {User._meta.db_table} u ON u.id = t.user_id
    WHERE t.key_hash = %s AND t.revoked_at IS NULL AND u.is_active
"""

# The ladder's columns, then whether it has match fields (most ladders have none: a report then reads none).
_HAS_FIELDS = f"EXISTS (SELECT 1 FROM {MatchField._meta.db_table} f WHERE f.ladder_id = l.id)"
LADDER_BY_SLUG = f"SELECT {_LADDER_COLUMNS}, {_HAS_FIELDS} FROM {Ladder._meta.db_table} l WHERE l.slug = %s"
# lower(username) is what the case-insensitive unique index covers.
USERS_BY_USERNAME = f"SELECT {_USER_COLUMNS} FROM {User._meta.db_table} u WHERE lower(u.username) = ANY(%s)"
# A report's ladder and players in one statement: the ladder's row (1) and a row for each user
# named (2), each with the other part's columns NULL.
REPORT_ROWS = f"""
    SELECT 1, {_LADDER_COLUMNS}, {_HAS_FIELDS}, {", ".join(["NULL"] * len(USER_FIELDS))}
    FROM {Ladder._meta.db_table} l WHERE l.slug = %s
    UNION ALL
    SELECT 2, {", ".join(["NULL"] * (len(LADDER_FIELDS) + 1))}, {_USER_COLUMNS}
    FROM {User._meta.db_table} u WHERE lower(u.username) = ANY(%s)
"""

_KEYS = IdempotencyKey._meta.db_table
# The key's row with the response, in the report's transaction; no row back when another
# request with the key committed first (a concurrent one waits here for it to end).
IDEMPOTENCY_STORE = f"""
    INSERT INTO {_KEYS} (user_id, key, request_hash, response_status, response_body, created_at)
    VALUES (%s, %s, %s, %s, %s::jsonb, now())
    ON CONFLICT (user_id, key) DO NOTHING
    RETURNING id
"""
