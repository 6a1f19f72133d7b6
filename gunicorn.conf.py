"""gunicorn's settings for ladder: ``gunicorn -c gunicorn.conf.py``, in production and in ``make stack``.

Run it behind a buffering proxy (``deploy/nginx.conf``), never facing clients: a sync
worker serves one request at a time and reads it from the socket itself, so a client
that sends its headers or body slowly holds a worker for as long as it likes (three such
connections stalled a two-worker site). The proxy reads each request whole and each
response whole, and only then hands them over, so a worker is busy only for the time
the application takes.

Command-line options override these, and these read a few environment variables:
``WEB_BIND`` (127.0.0.1:8000: loopback, the proxy in front), ``WEB_WORKERS`` (two per
core, plus one) and ``WEB_TIMEOUT`` (30 s: a worker silent that long is killed and
replaced, and its client gets a 502 from the proxy).
"""

from __future__ import annotations

import os

import gunicorn
import gunicorn.http.wsgi

wsgi_app = "config.wsgi"
bind = [os.environ.get("WEB_BIND", "127.0.0.1:8000")]
workers = int(os.environ.get("WEB_WORKERS") or 2 * (os.cpu_count() or 1) + 1)
worker_class = "sync"
timeout = int(os.environ.get("WEB_TIMEOUT") or 30)
# On SIGTERM (a deploy) a worker finishes the request it is serving, for up to this long.
graceful_timeout = 20
# Requests: a request line up to 4 KB (addresses with a search query fit), at most 50
# header fields of up to 8 KB each. Anything larger is refused before Django sees it.
limit_request_line = 4094
limit_request_fields = 50
limit_request_field_size = 8190
# The workers' heartbeat files in memory, not on a disk that may stall (containers).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = "-"
# No control socket (gunicornc): its default path is one per user, which every gunicorn
# of that user on the machine (a second site, `make stack`, the tests) would share.
control_socket_disable = True
# The scheme (X-Forwarded-Proto) is trusted from the proxy on loopback only; Django reads
# it through SECURE_PROXY_SSL_HEADER_NAME.
forwarded_allow_ips = "127.0.0.1,::1"

# Every response carries gunicorn's name in ``Server`` otherwise, and gunicorn
# has no setting for it: the name is the module constant ``gunicorn.SERVER``, which
# ``gunicorn.http.wsgi`` copied when it was imported, so both are replaced. (A proxy drops
# an upstream's ``Server`` header anyway; this covers a gunicorn reached directly.)
gunicorn.SERVER = gunicorn.http.wsgi.SERVER = "ladder"


def child_exit(server: object, worker: object) -> None:
    """With ``PROMETHEUS_MULTIPROC_DIR`` (docs/operations.md, "Metrics"), a worker's live
    gauges leave the scrape with it; its counters stay, so the totals never go back."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[attr-defined]
