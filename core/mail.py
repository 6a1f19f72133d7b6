"""Mail from templates, sent by a Celery task once the transaction that asked for it commits.

A mail is three templates side by side: ``<template>_subject.txt`` (one line),
``<template>.txt`` (the plain text every mail has) and ``<template>.html`` (optional).
They extend ``mail/base.txt`` and ``mail/base.html``, so every mail looks the same and
signs off the same way. Text is rendered without HTML escaping; HTML with it.

The templates are rendered in the caller, where the context's objects are at hand; the
task gets only strings. Nothing is sent in a request: the task is queued on commit (so a
rolled-back sign-up mails nobody) and retried with backoff while the server is away.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.template import Context, Engine, TemplateDoesNotExist

from core.tasks import send_mail_task

# Tells mail programs and auto-responders that no person sent it (RFC 3834): no "out of
# office" replies to the site's address.
DEFAULT_HEADERS = {"Auto-Submitted": "auto-generated"}


def absolute_url(path: str) -> str:
    """``SITE_URL`` + ``path`` (from ``reverse()``): the link a mail or a webhook carries."""
    if not path.startswith("/"):
        raise ValueError(f"path must start with '/', got {path!r}")
    return f"{settings.SITE_URL}{path}"


def render_mail(*, template: str, context: dict[str, Any]) -> tuple[str, str, str | None]:
    """The subject, the plain text and the HTML (or ``None``) of the mail ``template``."""
    full = {"site_name": settings.SITE_NAME, "site_url": settings.SITE_URL, **context}
    engine = Engine.get_default()
    subject = engine.get_template(f"{template}_subject.txt").render(Context(full, autoescape=False))
    body = engine.get_template(f"{template}.txt").render(Context(full, autoescape=False))
    try:
        html: str | None = engine.get_template(f"{template}.html").render(Context(full))
    except TemplateDoesNotExist:
        html = None
    # A header line may not break: a subject is one line whatever its template holds.
    return " ".join(subject.split()), body, html


def templated_message(
    *, to: list[str], template: str, context: dict[str, Any], headers: dict[str, str] | None = None
) -> EmailMultiAlternatives:
    """The mail ``template`` to ``to``, for a caller that sends it itself and must know whether
    the server took it (notification mails record that; ``send_templated_mail`` does not)."""
    if not to:
        raise ValueError("to must name at least one address, got an empty list")
    subject, body, html = render_mail(template=template, context=context)
    message = EmailMultiAlternatives(subject=subject, body=body, to=to, headers={**DEFAULT_HEADERS, **(headers or {})})
    if html is not None:
        message.attach_alternative(html, "text/html")
    return message


def send_templated_mail(
    *, to: list[str], template: str, context: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    """Queue the mail ``template`` (e.g. ``"mail/password_reset"``) to ``to`` once the transaction commits.

    ``headers`` adds to the defaults (``List-Unsubscribe`` for a notification, say).
    """
    if not to:
        raise ValueError("to must name at least one address, got an empty list")
    subject, body, html = render_mail(template=template, context=context)
    all_headers = {**DEFAULT_HEADERS, **(headers or {})}
    # robust: the caller's work is committed; a mail that cannot be queued (the broker is down)
    # is logged, and must not turn a done sign-up or settings change into an error page.
    transaction.on_commit(lambda: send_mail_task.delay(list(to), subject, body, html, all_headers), robust=True)
