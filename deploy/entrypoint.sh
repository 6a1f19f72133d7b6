#!/bin/sh
# The image's entry point (Containerfile): the first word of the command picks the process,
# the rest goes to it. Every process reads the same environment (.env.example).
#
#   web [GUNICORN ARGS]               gunicorn -c gunicorn.conf.py, on WEB_BIND (0.0.0.0:8000)
#   worker [QUEUE] [CELERY ARGS]      a Celery worker; QUEUE is all (the default: every queue,
#                                     enough for a small site), tasks, mail or webhooks
#   beat [CELERY ARGS]                celery beat: exactly one in a whole deployment
#   manage COMMAND [ARGS]             manage.py: migrate, createsuperuser, seed_demo --force …
#   healthcheck [web|worker|beat]     exit 0 when this container's process is healthy: web answers
#                                     /healthz, a worker answers a ping, beat sent a task lately
#   anything else                     run as given: bash, python …
set -eu

queue=${CELERY_QUEUE:-celery}
command=${1:-web}
[ $# -eq 0 ] || shift

case "$command" in
  web)
    exec gunicorn -c gunicorn.conf.py "$@"
    ;;
  worker)
    # Deliveries wait on other people's servers, so a busy site gives mail and webhooks
    # workers of their own (docs/operations.md, "Production").
    queues="$queue,$queue.mail,$queue.webhooks" name=worker
    case "${1:-}" in
      all) shift ;;
      tasks) shift; queues=$queue ;;
      mail) shift; queues=$queue.mail name=mail ;;
      webhooks) shift; queues=$queue.webhooks name=webhooks ;;
    esac
    exec celery -A config worker --loglevel "${LOG_LEVEL:-INFO}" --queues "$queues" --hostname "$name@%h" "$@"
    ;;
  beat)
    # The schedule lives in the database (django-celery-beat): no schedule or pid file, so a
    # restarted container never finds a stale one.
    exec celery -A config beat --loglevel "${LOG_LEVEL:-INFO}" "$@"
    ;;
  manage)
    exec python manage.py "$@"
    ;;
  healthcheck)
    case "${1:-web}" in
      web)
        # GET /healthz on this container's gunicorn, with a Host the site accepts and the
        # scheme a TLS proxy reports, so neither ALLOWED_HOSTS nor the HTTPS redirect answers.
        exec python - <<'PYTHON'
import http.client
import os
import sys

bind = os.environ.get("WEB_BIND", "0.0.0.0:8000").split(",")[0].strip()
host, _, port = bind.rpartition(":")
host = host.strip("[]")
if host in ("", "0.0.0.0", "::"):
    host = "127.0.0.1"
names = [name.strip() for name in os.environ.get("ALLOWED_HOSTS", "").split(",")]
name = next((n for n in names if n and n != "*" and not n.startswith(".")), "localhost")
try:
    connection = http.client.HTTPConnection(host, int(port or 8000), timeout=4)
    connection.request("GET", "/healthz", headers={"Host": name, "X-Forwarded-Proto": "https"})
    status = connection.getresponse().status
except (OSError, ValueError) as error:
    sys.exit(f"unhealthy: {bind}: {error}")
if status != 200:
    sys.exit(f"unhealthy: /healthz answered {status}")
PYTHON
        ;;
      worker)
        # The worker of this container (whichever queues it reads) answers a ping through Redis.
        host=${HOSTNAME:-$(hostname)}
        exec celery -A config inspect ping --timeout 5 --destination "worker@$host,mail@$host,webhooks@$host" >/dev/null
        ;;
      beat)
        # Beat records each periodic task in the database as it sends it (CELERY_BEAT_SYNC_EVERY),
        # and something is due every minute at least (the queue sweep every 15 s).
        exec python - <<'PYTHON'
import os
import sys
from datetime import timedelta

import django

django.setup()
from django.db.models import Max
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

latest = PeriodicTask.objects.filter(enabled=True).aggregate(latest=Max("last_run_at"))["latest"]
limit = timedelta(seconds=int(os.environ.get("BEAT_HEALTH_SECONDS") or 300))
if latest is None or timezone.now() - latest > limit:
    sys.exit(f"unhealthy: no periodic task sent since {latest}")
PYTHON
        ;;
      *)
        echo "healthcheck: web, worker or beat, not $1" >&2
        exit 2
        ;;
    esac
    ;;
  *)
    exec "$command" "$@"
    ;;
esac
