#!/usr/bin/env bash
# Runs ruff, then mypy beside the whole pytest suite (whose tests/test_layers.py runs the import
# contracts, lint-imports), against a real PostgreSQL and a real Redis, on every core
# (pytest-xdist, PYTEST_WORKERS workers; the default is the number of cores plus one, at most 8,
# and the number of cores with --fast or --pgbouncer). With
# --fast first (`make test-fast`) it runs ruff and the tests that need no browser and start no
# program of their own (-m "not browser and not external"), and skips mypy.
#
# With --pgbouncer first (`make test-pgbouncer`) it starts PgBouncer in transaction mode in front
# of PostgreSQL and runs the tests of the hand-written statements (PGBOUNCER_TESTS below) and the
# scale-out test through it, with prepared statements and server-side cursors off; the test
# databases are made and dropped directly (tests/conftest.py, TEST_DATABASE_POOLER).
#
# With DATABASE_URL and CELERY_BROKER_URL already set, it uses those servers. Otherwise it
# installs what is missing (Debian packages, as root), starts a throwaway PostgreSQL and
# Redis on loopback with their data in a temporary folder, and stops them on exit,
# whatever the outcome. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each pytest-xdist worker, and each process a test starts (a settings check, a worker, a server),
# imports the site's modules and the tests: Python keeps their compiled bytecode (in __pycache__,
# which git ignores) rather than compiling them again every time, even where the environment's
# PYTHONDONTWRITEBYTECODE asks otherwise. Compiling them took each worker's collection 10 s of a core.
unset PYTHONDONTWRITEBYTECODE

fast= pgbouncer=
if [ "${1:-}" = --fast ]; then fast=1; shift; fi
if [ "${1:-}" = --pgbouncer ]; then fast=1 pgbouncer=1; shift; fi

# Every test module that runs a hand-written statement (each app's sql*.py and store.py, core/db.py,
# the health checks), and the scale-out test, which runs the site's processes. Not the backups:
# pg_dump and pg_restore set their sessions up outside their transactions, so they go to
# PostgreSQL directly (docs/operations.md, "Scaling").
PGBOUNCER_TESTS=(
  tests/test_db_statements.py tests/test_db_insert.py tests/test_store_seam.py tests/test_one_writer.py
  tests/test_scale_out.py tests/test_celery_worker.py tests/monitoring
  tests/ratings tests/matchmaking tests/seasons tests/stats tests/notifications tests/webhooks tests/api
  tests/ladder/test_answer_counts.py tests/ladder/test_answer_sql.py tests/ladder/test_leaderboard_sql.py
  tests/ladder/test_ranking.py tests/ladder/test_nightly.py tests/ladder/test_nightly_tasks.py
  tests/ladder/test_fair_play.py tests/ladder/test_watch.py tests/ladder/test_watch_shared_prints.py
  tests/ladder/test_match_services.py tests/ladder/test_marks.py tests/ladder/test_suspensions.py
  tests/ladder/test_admin_autocomplete.py tests/ladder/test_unrated_matches.py
  tests/accounts/test_sign_in_prints.py tests/accounts/test_username_lookup.py tests/tournaments/test_unrated.py
  # schemathesis, the bot and the generated clients repeat the API tests' statements, slowly
  --ignore=tests/api/test_schemathesis.py --ignore=tests/api/test_bot.py --ignore=tests/api/test_schema_clients.py
)

log() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() { [ "$(id -u)" = 0 ]; }
pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
free_port() { .venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

ensure_packages() {
  local missing=()
  [ -n "$(pg_bindir)" ] || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
  if [ -z "$fast" ]; then extra_packages; fi
  [ ${#missing[@]} -eq 0 ] && return 0
  install_packages
}

extra_packages() {
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  # nginx in front of gunicorn: tests/test_gunicorn_config.py checks slow clients cannot hold it.
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
  # npm installs axe-core (package-lock.json), which the browser tests inject into each page.
  command -v npm >/dev/null || missing+=(npm)
  # Java runs the Nu HTML checker (vnu.jar, from npm too) over the pages the browser tests load.
  command -v java >/dev/null || missing+=(default-jre-headless)
}

install_packages() {
  if as_root && command -v apt-get >/dev/null; then
    log "installing ${missing[*]} with apt-get"
    apt-get update -qq
    # Installed only to be run by the tests: Debian's scripts must not start the system's
    # nginx, PostgreSQL or Redis as services, which policy-rc.d's 101 tells them.
    local made_policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
      || { [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d; die "apt-get install ${missing[*]} failed"; }
    [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d
  else
    die "missing ${missing[*]}: install them (apt-get install ${missing[*]}) or set DATABASE_URL and CELERY_BROKER_URL"
  fi
}

start_services() {
  ensure_packages
  workdir=$(mktemp -d /tmp/ladder-test.XXXXXX)
  chmod 755 "$workdir"
  local run_pg=()
  if as_root; then
    chown postgres:postgres "$workdir"
    run_pg=(runuser -u postgres --)
  fi
  local bin pg_port redis_port
  bin=$(pg_bindir)
  pg_port=$(free_port)
  redis_port=$(free_port)
  log "starting PostgreSQL on 127.0.0.1:$pg_port (data in $workdir)"
  "${run_pg[@]}" "$bin/initdb" -D "$workdir/pg" -A trust -U postgres --no-sync -E UTF8 >"$workdir/initdb.log" 2>&1 \
    || { cat "$workdir/initdb.log" >&2; die "initdb failed"; }
  "${run_pg[@]}" "$bin/pg_ctl" -D "$workdir/pg" -l "$workdir/pg.log" -w start -o \
    "-p $pg_port -k $workdir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    >/dev/null || { cat "$workdir/pg.log" >&2; die "PostgreSQL did not start"; }
  pg_started=1
  log "starting Redis on 127.0.0.1:$redis_port"
  "${run_pg[@]}" redis-server --port "$redis_port" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
    --dir "$workdir" --pidfile "$workdir/redis.pid" --logfile "$workdir/redis.log" \
    || die "Redis did not start"
  for _ in $(seq 50); do [ -s "$workdir/redis.pid" ] && break; sleep 0.1; done
  export DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/ladder"
  export CELERY_BROKER_URL="redis://127.0.0.1:$redis_port/0"
  export CACHE_URL="redis://127.0.0.1:$redis_port/1"
}

stop_services() {
  local status=$?
  if [ -n "${pgbouncer_dir:-}" ]; then
    if [ -s "$pgbouncer_dir/pgbouncer.pid" ]; then kill "$(cat "$pgbouncer_dir/pgbouncer.pid")" 2>/dev/null || true; fi
    rm -rf "$pgbouncer_dir"
  fi
  if [ -n "${checks_pid:-}" ]; then kill "$checks_pid" 2>/dev/null || true; fi
  if [ -n "${workdir:-}" ]; then
    if [ -s "$workdir/redis.pid" ]; then kill "$(cat "$workdir/redis.pid")" 2>/dev/null || true; fi
    if [ -n "${pg_started:-}" ]; then
      "${run_pg_stop[@]}" "$(pg_bindir)/pg_ctl" -D "$workdir/pg" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$workdir"
  fi
  exit "$status"
}

run_pg_stop=()
if as_root; then run_pg_stop=(runuser -u postgres --); fi
checks_pid=
trap stop_services EXIT
trap 'exit 143' INT TERM # stopped by a signal: exit, so the EXIT trap still stops what was started

if [ -n "${DATABASE_URL:-}" ] && [ -n "${CELERY_BROKER_URL:-}" ]; then
  log "using the existing PostgreSQL and Redis from DATABASE_URL and CELERY_BROKER_URL"
  [ -n "$fast" ] || { [ -x /usr/bin/chromium ] && command -v npm >/dev/null && command -v java >/dev/null; } \
    || { as_root && ensure_packages; } || true
else
  start_services
fi

# axe-core and vnu-jar, pinned in package-lock.json: tests/browser/conftest.py checks every page
# with axe and every document the browser tests load with the Nu HTML checker.
if [ -z "$fast" ] && { [ ! -f node_modules/axe-core/axe.min.js ] || [ ! -f node_modules/vnu-jar/build/dist/vnu.jar ]; }; then
  command -v npm >/dev/null || die "missing npm: install it (apt-get install npm) to fetch axe-core and vnu-jar"
  log "installing axe-core and vnu-jar with npm ci"
  npm ci --no-audit --no-fund --ignore-scripts
fi

# PgBouncer (installed with apt-get as root when missing) in transaction mode on loopback, in
# front of DATABASE_URL's server, for every database on it (each pytest-xdist worker has its own).
start_pgbouncer() {
  local bin url_host url_port port
  if ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ]; then
    missing=(pgbouncer)
    install_packages
  fi
  bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
  read -r url_host url_port < <(.venv/bin/python -c 'import os, urllib.parse as u; p = u.urlsplit(os.environ["DATABASE_URL"]); print(p.hostname or "127.0.0.1", p.port or 5432)')
  port=$(free_port)
  pgbouncer_dir=$(mktemp -d /tmp/ladder-pgbouncer.XXXXXX)
  chmod 755 "$pgbouncer_dir"
  printf '"postgres" ""\n' >"$pgbouncer_dir/users.txt"
  cat >"$pgbouncer_dir/pgbouncer.ini" <<INI
[databases]
* = host=$url_host port=$url_port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $pgbouncer_dir/users.txt
pool_mode = transaction
max_client_conn = 500
default_pool_size = 10
ignore_startup_parameters = extra_float_digits
logfile = $pgbouncer_dir/pgbouncer.log
pidfile = $pgbouncer_dir/pgbouncer.pid
INI
  local user=()
  # PgBouncer refuses to run as root: it runs as postgres then.
  if as_root; then chown -R postgres:postgres "$pgbouncer_dir"; user=(-u postgres); fi
  log "starting PgBouncer (transaction mode) on 127.0.0.1:$port in front of $url_host:$url_port"
  "$bin" -d "${user[@]}" "$pgbouncer_dir/pgbouncer.ini" || die "PgBouncer did not start"
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  export TEST_DATABASE_POOLER="127.0.0.1:$port"
  export DATABASE_PREPARED_STATEMENTS=0 DATABASE_SERVER_SIDE_CURSORS=0 DATABASE_CLIENT_CHECK_MS=0
}

if [ -n "$pgbouncer" ]; then
  start_pgbouncer
  workers=${PYTEST_WORKERS:-$(nproc)}
  [ "$workers" -le 8 ] || workers=8
  log "pytest on $workers workers, through PgBouncer"
  status=0
  .venv/bin/python -m pytest -n "$workers" --dist worksteal -m "not browser" "${PGBOUNCER_TESTS[@]}" "$@" || status=$?
  [ "$status" = 0 ] || { printf -- '--- PgBouncer log\n' >&2; tail -n 30 "$pgbouncer_dir/pgbouncer.log" >&2; }
  exit "$status"
fi

log "ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

# mypy runs beside pytest, at a lower priority (nice), on the time a worker leaves a core idle
# while its test waits; its output follows pytest's, and its failing fails the run. The import
# contracts are a test of the suite (tests/test_layers.py runs lint-imports).
if [ -z "$fast" ]; then
  log "mypy, beside pytest (its output follows pytest's)"
  checks_log=$(mktemp /tmp/ladder-checks.XXXXXX)
  ( echo "==> mypy"; nice -n 10 .venv/bin/mypy ) >"$checks_log" 2>&1 &
  checks_pid=$!
fi

# One worker per core for `make test-fast`, whose tests are CPU-bound (with PostgreSQL's share):
# more would only queue. The whole suite gets one more: its browser and external tests wait
# (on Chromium, on a program they started, on a timeout they test), and a third worker fills
# that time on two cores. Each worker has its own test database and Redis databases
# (tests/conftest.py), and worksteal hands a worker that finished its part tests another has
# not reached yet.
if [ -n "$fast" ]; then default_workers=$(nproc); else default_workers=$(($(nproc) + 1)); fi
workers=${PYTEST_WORKERS:-$default_workers}
[ "$workers" -le 8 ] || workers=8 # Redis has 16 databases: two per worker
selection=()
[ -z "$fast" ] || selection=(-m "not browser and not external")
log "pytest on $workers workers"
tests_status=0
.venv/bin/python -m pytest -n "$workers" --dist worksteal "${selection[@]}" "$@" || tests_status=$?

if [ -n "$checks_pid" ]; then
  checks_status=0
  wait "$checks_pid" || checks_status=$?
  checks_pid=
  cat "$checks_log"
  rm -f "$checks_log"
  [ "$checks_status" = 0 ] || { printf 'error: mypy failed (above)\n' >&2; exit "$checks_status"; }
fi
exit "$tests_status"
