"""core.mail: templated mail, sent after the commit by a Celery task that retries a server away."""

from __future__ import annotations

import socket

import pytest
from django.db import transaction

from core.mail import absolute_url, render_mail, send_templated_mail
from core.tasks import send_mail_task

pytestmark = pytest.mark.django_db
CONTEXT = {"user": {"username": "mallory"}, "verify_url": "http://127.0.0.1:8000/x/?a=1&b=<2>", "days": 3}


def test_a_mail_is_sent_only_once_its_transaction_commits(smtp_server, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        send_templated_mail(to=["mallory@example.org"], template="mail/verify_email", context=CONTEXT)
        assert smtp_server.messages == []

    for callback in queued:
        callback()
    [mail] = smtp_server.wait_for(1)
    assert mail["To"] == "mallory@example.org"
    assert mail["Auto-Submitted"] == "auto-generated"


def test_a_rolled_back_transaction_mails_nobody(smtp_server, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        send_templated_mail(to=["mallory@example.org"], template="mail/verify_email", context=CONTEXT)
        raise RuntimeError("the sign-up failed")

    assert smtp_server.messages == []


def test_extra_headers_are_sent(smtp_server, django_capture_on_commit_callbacks):
    headers = {"List-Unsubscribe": "<http://127.0.0.1:8000/u/1/>"}
    with django_capture_on_commit_callbacks(execute=True):
        send_templated_mail(to=["a@example.org"], template="mail/verify_email", context=CONTEXT, headers=headers)

    assert smtp_server.wait_for(1)[0]["List-Unsubscribe"] == "<http://127.0.0.1:8000/u/1/>"


def test_text_is_not_escaped_and_html_is():
    subject, text, html = render_mail(template="mail/verify_email", context=CONTEXT)

    assert subject == "Confirm your address for Ladder"
    assert "http://127.0.0.1:8000/x/?a=1&b=<2>" in text
    assert "http://127.0.0.1:8000/x/?a=1&amp;b=&lt;2&gt;" in html


def test_an_empty_recipient_list_is_refused():
    with pytest.raises(ValueError, match="to must name at least one address"):
        send_templated_mail(to=[], template="mail/verify_email", context=CONTEXT)


def test_absolute_urls_start_with_site_url(settings):
    settings.SITE_URL = "https://ladder.example.org"

    assert absolute_url("/ladders/chess/") == "https://ladder.example.org/ladders/chess/"
    with pytest.raises(ValueError, match="path must start with '/'"):
        absolute_url("ladders/chess/")


@pytest.fixture
def retries_run_at_once():
    """``apply()`` runs a task's retries at once, in-process (without waiting), when eager
    errors are not re-raised; re-raised, the first retry would end the run."""
    from config.celery import app

    previous = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = previous


@pytest.mark.usefixtures("retries_run_at_once")
def test_a_server_that_says_try_later_gets_the_mail_again(smtp_server):
    smtp_server.refusals = ["451 4.3.0 Try again later"] * 2

    result = send_mail_task.apply(args=(["mallory@example.org"], "Hi", "Body"))

    assert result.get() == 1
    assert smtp_server.refusals == []
    assert [m["Subject"] for m in smtp_server.wait_for(1)] == ["Hi"]


def test_a_recipient_refused_for_good_is_not_asked_again(smtp_server):
    smtp_server.refusals = ["550 5.1.1 No such mailbox"] * 5

    result = send_mail_task.apply(args=(["nobody@example.org"], "Hi", "Body"))

    assert result.get() == 0
    assert len(smtp_server.refusals) == 4  # one try only
    assert smtp_server.messages == []


@pytest.mark.usefixtures("retries_run_at_once")
def test_a_server_that_is_down_is_retried_then_the_error_kept(settings, caplog):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]  # nothing listens once the probe is closed
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", closed_port, 1

    result = send_mail_task.apply(args=(["mallory@example.org"], "Hi", "Body"))

    assert result.state == "FAILURE"
    assert isinstance(result.result, ConnectionRefusedError)
    retries = [r for r in caplog.records if "retry: Retry in" in r.getMessage()]
    assert len(retries) == send_mail_task.max_retries == 10
