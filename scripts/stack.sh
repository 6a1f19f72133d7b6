#!/usr/bin/env bash
# A production-like stack on loopback: PostgreSQL, Redis, nginx in front of gunicorn, Celery
# workers (the site's tasks, mail, webhooks) and celery beat, each a process of its own, as
# a deployment runs them (DEBUG off, static files collected, periodic tasks from the
# database, gunicorn with gunicorn.conf.py behind nginx with deploy/proxy.conf).
#
# Data lives in STACK_DIR (default var/stack; as root, /tmp/ladder-stack when the postgres
# user cannot reach var/) and survives restarts. Ctrl-C stops every process, the servers
# too. Settings (environment): HOST, PORT (web, 8000), STACK_PG_PORT (54329),
# STACK_REDIS_PORT (56389), STACK_WEB_PORT (gunicorn's, behind nginx: a free port),
# WEB_WORKERS (2), WORKER_CONCURRENCY (2), MAIL_CONCURRENCY (1), WEBHOOK_CONCURRENCY (2),
# STACK_DEMO (1: load the demo data with its public passwords; 0 to skip), STACK_NGINX (1:
# nginx in front, installed with apt-get as root if missing, else a warning and gunicorn
# alone; 0: gunicorn alone).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
PG_PORT=${STACK_PG_PORT:-54329}
REDIS_PORT=${STACK_REDIS_PORT:-56389}
WEB_WORKERS=${WEB_WORKERS:-2}
WORKER_CONCURRENCY=${WORKER_CONCURRENCY:-2}
MAIL_CONCURRENCY=${MAIL_CONCURRENCY:-1}
WEBHOOK_CONCURRENCY=${WEBHOOK_CONCURRENCY:-2}
STACK_DEMO=${STACK_DEMO:-1}
STACK_NGINX=${STACK_NGINX:-1}

log() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
as_root() { [ "$(id -u)" = 0 ]; }
pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
nginx_bin() { command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; }; }
warn() { printf 'warning: %s\n' "$*" >&2; }

bash scripts/ensure-venv.sh requirements.txt

missing=()
[ -n "$(pg_bindir)" ] || missing+=(postgresql)
command -v redis-server >/dev/null || missing+=(redis-server)
if [ "$STACK_NGINX" = 1 ] && [ -z "$(nginx_bin)" ] && as_root && command -v apt-get >/dev/null; then
  missing+=(nginx-light)
fi
if [ ${#missing[@]} -gt 0 ]; then
  as_root && command -v apt-get >/dev/null || die "missing ${missing[*]}: apt-get install ${missing[*]}"
  log "installing ${missing[*]} with apt-get"
  apt-get update -qq
  # Installed only to be run here: Debian's scripts must not start the system's nginx (or
  # PostgreSQL, Redis) as services, which policy-rc.d's 101 tells them.
  made_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d; die "apt-get install ${missing[*]} failed"; }
  [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d
fi
nginx=
if [ "$STACK_NGINX" = 1 ]; then
  nginx=$(nginx_bin) || true
  [ -n "$nginx" ] || warn "no nginx (apt-get install nginx-light, as root): gunicorn faces clients alone," \
    "and a few slow clients can hold every worker (see deploy/nginx.conf)"
fi
WEB_PORT=$PORT web_bind="$HOST:$PORT"
if [ -n "$nginx" ]; then
  WEB_PORT=${STACK_WEB_PORT:-$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
  web_bind="127.0.0.1:$WEB_PORT"
fi
for port in "$PORT" "$PG_PORT" "$REDIS_PORT" "$WEB_PORT"; do
  port_free "$port" || die "port $port on 127.0.0.1 is taken (set PORT, STACK_PG_PORT, STACK_REDIS_PORT or STACK_WEB_PORT)"
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
if [ "$STACK_DEMO" = 1 ]; then
  .venv/bin/python manage.py seed_demo --force
  .venv/bin/python manage.py seed_demo_fields --force
  .venv/bin/python manage.py seed_demo_seasons --force
  .venv/bin/python manage.py seed_demo_tournaments --force
  .venv/bin/python manage.py rebuild_stats
  .venv/bin/python manage.py seed_demo_queue --force
fi

prefixed() { local name=$1; shift; "$@" > >(sed -u "s/^/$name | /") 2>&1 & pids+=($!); }
if [ -n "$nginx" ]; then
  # nginx on HOST:PORT buffers every request and response for gunicorn on loopback.
  mkdir -p "$dir/nginx"
  user=
  if as_root; then user="user $(id -u www-data >/dev/null 2>&1 && echo www-data || echo 'nobody nogroup');"; fi
  cat >"$dir/nginx/nginx.conf" <<NGINX
$user
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
    access_log off;
    server_tokens off;
    client_body_temp_path $dir/nginx/client_body;
    proxy_temp_path $dir/nginx/proxy;
    fastcgi_temp_path $dir/nginx/fastcgi;
    uwsgi_temp_path $dir/nginx/uwsgi;
    scgi_temp_path $dir/nginx/scgi;
    upstream ladder { server 127.0.0.1:$WEB_PORT; keepalive 8; }
    server {
        listen $HOST:$PORT;
        include $root/deploy/proxy.conf;
        location / { proxy_pass http://ladder; }
    }
}
NGINX
  "$nginx" -t -q -e stderr -p "$dir/nginx" -c "$dir/nginx/nginx.conf" || die "nginx refused $dir/nginx/nginx.conf"
  prefixed "nginx " "$nginx" -e stderr -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -g "daemon off;"
  # The site's client is the address nginx saw, and the scheme the one it was reached by.
  export PROXY_COUNT=1 API_NUM_PROXIES=1 SECURE_PROXY_SSL_HEADER_NAME=HTTP_X_FORWARDED_PROTO
fi
prefixed "web   " .venv/bin/gunicorn -c gunicorn.conf.py --bind "$web_bind" --workers "$WEB_WORKERS"
# Deliveries wait on other people's servers: mail and webhooks have workers of their own, so
# a receiver that never answers holds neither the sweeps nor the mail (docs/operations.md).
queue=${CELERY_QUEUE:-celery}
prefixed "worker" .venv/bin/celery -A config worker --loglevel INFO --concurrency "$WORKER_CONCURRENCY" \
  --queues "$queue" --hostname "worker@%h"
prefixed "mail  " .venv/bin/celery -A config worker --loglevel INFO --concurrency "$MAIL_CONCURRENCY" \
  --queues "$queue.mail" --hostname "mail@%h"
prefixed "hooks " .venv/bin/celery -A config worker --loglevel INFO --concurrency "$WEBHOOK_CONCURRENCY" \
  --queues "$queue.webhooks" --hostname "webhooks@%h"
prefixed "beat  " .venv/bin/celery -A config beat --loglevel INFO

cat <<EOF

  Ladder (production-like) at http://$HOST:$PORT/   moderation: http://$HOST:$PORT/admin/
  ${nginx:+nginx on $HOST:$PORT in front of }gunicorn on $web_bind
  PostgreSQL 127.0.0.1:$PG_PORT, Redis 127.0.0.1:$REDIS_PORT, data in $dir
  Run the nightly job now, through the broker:
    CELERY_BROKER_URL=$CELERY_BROKER_URL .venv/bin/celery -A config call ladder.tasks.run_nightly_task
  Ctrl-C stops everything.

EOF
# The first process to end (or Ctrl-C) ends the stack.
wait -n "${pids[@]}" || true
