"""``make run``'s server: runserver, plus the periodic tasks when nothing else can run them.

The embedded default (SQLite, no broker) runs every task eagerly in the process that sends
it, so no worker or beat exists to run the periodic work: the queue sweep, ready-check
deadlines, auto-confirmation, the nightly job, mail. This command runs celery beat's own
scheduler (``CELERY_BEAT_SCHEDULER``, the schedule in the database that moderators edit in
the admin) in a thread of the serving process, where each due task runs eagerly. It lives
and dies with that process: the autoreloader restarts it with the code, Ctrl-C ends both.
With a broker configured, tasks go to workers and ``celery beat`` runs the schedule, so this
command starts none (two schedulers would send every task twice).

Links in mails and webhooks start with ``SITE_URL``; unless it is set in the environment,
it is the address this server answers on, so ``PORT=9000 make run`` mails links to 9000.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from io import StringIO
from typing import Any

from celery import Celery, current_app
from celery.beat import Service
from celery.utils.imports import symbol_by_name
from django.conf import settings
from django.contrib.staticfiles.management.commands.runserver import Command as RunserverCommand
from django.core.management import call_command
from django.core.management.base import CommandParser
from django.db import close_old_connections

logger = logging.getLogger(__name__)

# Addresses that mean "every interface": a link needs one this machine answers on.
WILDCARDS = {"0": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}
# The demo's searchers are seen as often as a searching page polls them, well inside the
# 30 s after which the queue sweep drops a search nobody polls.
DEMO_SEEN_SECONDS = 10.0
STOP_SECONDS = 5.0


class Command(RunserverCommand):
    help = (
        "runserver, plus celery beat's schedule run in-process when tasks run eagerly (no broker); "
        "SITE_URL defaults to the address served."
    )
    addr: str  # set by runserver's handle(), from the address argument

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--demo-searchers",
            action="store_true",
            help="Keep the demo's searchers (seed_demo_queue) searching, as if their pages polled.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self._demo_searchers = bool(options["demo_searchers"])
        super().handle(*args, **options)

    def on_bind(self, server_port: int) -> None:
        """Runs in the process that serves (the autoreloader's child), once its port is bound."""
        super().on_bind(server_port)
        if "SITE_URL" not in os.environ:
            host = WILDCARDS.get(self.addr, self.addr)
            host = f"[{host}]" if ":" in host else host
            settings.SITE_URL = f"{self.protocol}://{host}:{server_port}"
        self.stdout.write(f"Links in mails start with {settings.SITE_URL}/ (set SITE_URL to change it).")
        app = current_app
        if not app.conf.task_always_eager:
            self.stdout.write(
                "Periodic tasks are not run here: tasks go to the broker, run `celery beat` and a worker."
            )
            return
        app.loader.import_default_modules()  # every app's tasks.py, as a worker or beat imports them
        # A one-second tick, as celery's embedded beat uses, so the thread stops within a second.
        beat = Service(app, max_interval=1, scheduler_cls=symbol_by_name(app.conf.beat_scheduler))
        thread = threading.Thread(target=_beat, args=(app, beat), name="beat", daemon=True)
        thread.start()
        atexit.register(_stop, beat, thread)
        self.stdout.write("Periodic tasks run here on their schedules (admin → Periodic tasks).")
        if self._demo_searchers:
            stop = threading.Event()
            keeper = threading.Thread(target=_keep_demo_searchers, args=(stop,), name="demo-searchers", daemon=True)
            keeper.start()
            atexit.register(_stop_demo, stop, keeper)


def _beat(app: Celery, beat: Service) -> None:
    app.set_current()
    beat.start()


def _stop(beat: Service, thread: threading.Thread) -> None:
    """Ends the scheduler within its one-second tick, letting it record the runs (``last_run_at``)."""
    beat.stop()
    thread.join(timeout=STOP_SECONDS)


def _keep_demo_searchers(stop: threading.Event) -> None:
    while not stop.wait(DEMO_SEEN_SECONDS):
        try:
            call_command("seed_demo_queue", stdout=StringIO())
        except Exception:
            logger.exception("the demo's searchers could not be kept searching")
        finally:
            close_old_connections()


def _stop_demo(stop: threading.Event, keeper: threading.Thread) -> None:
    stop.set()
    keeper.join(timeout=STOP_SECONDS)
