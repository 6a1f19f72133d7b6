#!/usr/bin/env bash
# A production-like stack on loopback: PostgreSQL, Redis, gunicorn, a Celery worker and
# celery beat, each a process of its own, as a deployment runs them (DEBUG off, static
# files collected, periodic tasks from the database).
#
# Data lives in STACK_DIR (default var/stack; as root, /tmp/ladder-stack when the postgres
# user cannot reach var/) and survives restarts. Ctrl-C stops every process, the servers
# too. Settings (environment): HOST, PORT (web, 8000), STACK_PG_PORT (54329),
# STACK_REDIS_PORT (56389), WEB_WORKERS (2), WORKER_CONCURRENCY (2), STACK_DEMO (1: load
# the demo data with its public passwords; 0 to skip).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
PG_PORT=${STACK_PG_PORT:-54329}
REDIS_PORT=${STACK_REDIS_PORT:-56389}
WEB_WORKERS=${WEB_WORKERS:-2}
WORKER_CONCURRENCY=${WORKER_CONCURRENCY:-2}
STACK_DEMO=${STACK_DEMO:-1}

log() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
as_root() { [ "$(id -u)" = 0 ]; }
pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

bash scripts/ensure-venv.sh requirements.txt

missing=()
[ -n "$(pg_bindir)" ] || missing+=(postgresql)
command -v redis-server >/dev/null || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ]; then
  as_root && command -v apt-get >/dev/null || die "missing ${missing[*]}: apt-get install ${missing[*]}"
  log "installing ${missing[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for port in "$PORT" "$PG_PORT" "$REDIS_PORT"; do
  port_free "$port" || die "port $port on 127.0.0.1 is taken (set PORT, STACK_PG_PORT or STACK_REDIS_PORT)"
done

run_pg=()
dir=${STACK_DIR:-$root/var/stack}
if as_root; then
  run_pg=(runuser -u postgres --)
  mkdir -p "$dir"
  if [ -z "${STACK_DIR:-}" ] && ! runuser -u postgres -- test -x "$dir"; then
    dir=/tmp/ladder-stack  # PostgreSQL runs as postgres, which cannot reach the checkout
    mkdir -p "$dir"
  fi
  install -d -o postgres -g postgres "$dir/pg"
else
  mkdir -p "$dir/pg"
fi
chmod 700 "$dir/pg"
bin=$(pg_bindir)

pids=()
stop() {
  local status=$?
  trap - INT TERM EXIT
  log "stopping"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -s "$dir/redis.pid" ]; then kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; fi
  "${run_pg[@]}" "$bin/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  exit "$status"
}
trap stop INT TERM EXIT

if [ ! -s "$dir/pg/data/PG_VERSION" ]; then
  log "creating a PostgreSQL cluster in $dir/pg/data"
  "${run_pg[@]}" "$bin/initdb" -D "$dir/pg/data" -A trust -U postgres -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
fi
log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
"${run_pg[@]}" "$bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w start \
  -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=''" >/dev/null \
  || { tail -n 20 "$dir/pg/postgres.log" >&2; die "PostgreSQL did not start"; }
log "starting Redis on 127.0.0.1:$REDIS_PORT"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
  --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" || die "Redis did not start"

[ -s "$dir/secret_key" ] || .venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(50))' >"$dir/secret_key"
export DEBUG=0 SECRET_KEY="$(cat "$dir/secret_key")" ALLOWED_HOSTS="127.0.0.1,localhost,$HOST"
# Plain HTTP on loopback: the HTTPS-only defaults of DEBUG=0 would lock the browser out.
export SECURE_SSL_REDIRECT=0 SESSION_COOKIE_SECURE=0 CSRF_COOKIE_SECURE=0 SECURE_HSTS_SECONDS=0
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/ladder"
export CELERY_BROKER_URL="redis://127.0.0.1:$REDIS_PORT/0" CACHE_URL="redis://127.0.0.1:$REDIS_PORT/1"
export LADDER_VAR_DIR="$dir/var" STATIC_ROOT="$dir/static"

.venv/bin/python - "$PG_PORT" <<'EOF'
import sys

import psycopg

with psycopg.connect(f"postgresql://postgres@127.0.0.1:{sys.argv[1]}/postgres", autocommit=True) as conn:
    if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'ladder'").fetchone():
        conn.execute('CREATE DATABASE "ladder"')
EOF
log "migrating, collecting static files"
.venv/bin/python manage.py migrate --noinput -v 0
.venv/bin/python manage.py collectstatic --noinput -v 0
if [ "$STACK_DEMO" = 1 ]; then .venv/bin/python manage.py seed_demo --force; fi

prefixed() { local name=$1; shift; "$@" > >(sed -u "s/^/$name | /") 2>&1 & pids+=($!); }
prefixed "web   " .venv/bin/gunicorn ladder.wsgi --bind "$HOST:$PORT" --workers "$WEB_WORKERS" \
  --access-logfile - --graceful-timeout 10
prefixed "worker" .venv/bin/celery -A ladder worker --loglevel INFO --concurrency "$WORKER_CONCURRENCY" \
  --hostname "worker@%h"
prefixed "beat  " .venv/bin/celery -A ladder beat --loglevel INFO

cat <<EOF

  Ladder (production-like) at http://$HOST:$PORT/   moderation: http://$HOST:$PORT/admin/
  PostgreSQL 127.0.0.1:$PG_PORT, Redis 127.0.0.1:$REDIS_PORT, data in $dir
  Run the nightly job now, through the broker:
    CELERY_BROKER_URL=$CELERY_BROKER_URL .venv/bin/celery -A ladder call ladder.tasks.run_nightly_task
  Ctrl-C stops everything.

EOF
# The first process to end (or Ctrl-C) ends the stack.
wait -n "${pids[@]}" || true
