"""Error reports to Sentry (or a server that speaks its protocol, such as GlitchTip), when
``SENTRY_DSN`` is set (docs/operations.md, "Error reports and logs").

An unhandled exception in a request, a Celery task or a log line at ERROR becomes one event,
tagged with ``SENTRY_ENVIRONMENT`` and ``SENTRY_RELEASE``. Nothing personal goes along: no
cookies, no user (``send_default_pii=False`` keeps the session, the user's id, name and
address and the client's IP out), no request body (a form may hold an address or a password),
and no local variables of the frames (a view's locals hold the signed-in user). Sentry's
default scrubber also removes any field named like a password, a token or a secret.
"""

from __future__ import annotations

import sentry_sdk
from sentry_sdk.integrations.celery import CeleryIntegration
from sentry_sdk.integrations.django import DjangoIntegration
from sentry_sdk.integrations.redis import RedisIntegration


def sentry_init(*, dsn: str, environment: str, release: str | None, traces_sample_rate: float) -> None:
    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        release=release,
        integrations=[DjangoIntegration(), CeleryIntegration(), RedisIntegration()],
        send_default_pii=False,
        include_local_variables=False,
        max_request_body_size="never",
        traces_sample_rate=traces_sample_rate,
    )
