"""Deliveries go to queues of their own, so a receiver that never answers holds no sweep.

Routing is by task name (``CELERY_TASK_ROUTES``): what queues a task, a request, a service
or beat's stored schedule, needs no ``queue=`` of its own.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django_celery_beat.models import PeriodicTask

from config.celery import app

MAIL = [
    "core.tasks.send_mail_task",
    "accounts.tasks.send_password_reset_task",
    "notifications.tasks.send_notification_mails_task",
    "notifications.tasks.send_digests_task",
]
WEBHOOKS = ["webhooks.tasks.deliver_webhook_task"]
SITE = [
    "matchmaking.tasks.sweep_queue_task",
    "ladder.tasks.run_nightly_task",
    "ladder.tasks.run_ladder_nightly_task",
    "ladder.tasks.confirm_overdue_matches_task",
    "webhooks.tasks.deliver_due_webhooks_task",  # only queues deliveries: quick
    "seasons.tasks.close_due_seasons_task",
]


def queue_of(task: str) -> str:
    app.loader.import_default_modules()  # what a worker imports at start: every app's tasks.py
    assert task in app.tasks, task
    return app.amqp.router.route({}, task)["queue"].name


@pytest.mark.parametrize("task", MAIL)
def test_mail_goes_to_the_mail_queue(task):
    assert queue_of(task) == settings.CELERY_MAIL_QUEUE == f"{settings.CELERY_TASK_DEFAULT_QUEUE}.mail"


@pytest.mark.parametrize("task", WEBHOOKS)
def test_webhook_deliveries_go_to_the_webhook_queue(task):
    assert queue_of(task) == settings.CELERY_WEBHOOK_QUEUE == f"{settings.CELERY_TASK_DEFAULT_QUEUE}.webhooks"


@pytest.mark.parametrize("task", SITE)
def test_sweeps_and_deadlines_stay_on_the_sites_queue(task):
    assert queue_of(task) == settings.CELERY_TASK_DEFAULT_QUEUE


@pytest.mark.django_db
def test_beats_schedules_name_no_queue_so_the_routes_apply():
    assert not PeriodicTask.objects.exclude(queue__isnull=True).exclude(queue="").exists()
    stored = set(PeriodicTask.objects.values_list("task", flat=True))
    assert "notifications.tasks.send_notification_mails_task" in stored
    assert "matchmaking.tasks.sweep_queue_task" in stored
