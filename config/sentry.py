"""Error reports to Sentry (or a server that speaks its protocol, such as GlitchTip), when
``SENTRY_DSN`` is set (docs/operations.md, "Error reports and logs").

An unhandled exception in a request, a Celery task or a log line at ERROR becomes one event,
tagged with ``SENTRY_ENVIRONMENT`` and ``SENTRY_RELEASE``. Nothing personal goes along: no
cookies, no user (``send_default_pii=False`` keeps the session, the user's id, name and
address and the client's IP out), no request body (a form may hold an address or a password),
and no local variables of the frames (a view's locals hold the signed-in user). Sentry's
default scrubber also removes any field named like a password, a token or a secret, and the
breadcrumbs and spans of Redis keep the command but not the key (a cached session's key is
the session itself).
"""

from __future__ import annotations

from typing import Any

import sentry_sdk
from sentry_sdk.integrations.celery import CeleryIntegration
from sentry_sdk.integrations.django import DjangoIntegration
from sentry_sdk.integrations.redis import RedisIntegration

# What the Redis integration records names keys, and a cached session's key is the session's
# secret (``django.contrib.sessions.cached_db<session key>``): only the command is kept.
KEY_FIELDS = ("redis.key", "cache.key", "db.statement")


def _command_only(record: dict[str, Any]) -> None:
    data = record.get("data") or {}
    command = data.get("redis.command") or data.get("db.operation") or "redis"
    for field in KEY_FIELDS:
        data.pop(field, None)
    for text in ("message", "description"):
        if record.get(text):
            record[text] = str(command)


def before_breadcrumb(crumb: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    if crumb.get("category") == "redis" or crumb.get("type") == "redis":
        _command_only(crumb)
    return crumb


def before_send_transaction(event: Any, hint: dict[str, Any]) -> Any:
    for span in event.get("spans") or ():
        if str(span.get("op", "")).startswith(("db.redis", "cache")):
            _command_only(span)
    return event


def sentry_init(*, dsn: str, environment: str, release: str | None, traces_sample_rate: float) -> None:
    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        release=release,
        integrations=[DjangoIntegration(), CeleryIntegration(), RedisIntegration()],
        include_local_variables=False,
        max_request_body_size="never",
        before_breadcrumb=before_breadcrumb,
        before_send_transaction=before_send_transaction,
        traces_sample_rate=traces_sample_rate,
    )
