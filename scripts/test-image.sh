#!/usr/bin/env bash
# `make test-image`: builds the container image (Containerfile) and runs it as a deployment
# does (tests/image/test_image.py), then checks compose.yaml (tests/test_compose.py).
#
# This machine pulls no images from a registry, so the image is built on a Debian bookworm
# base made here with debootstrap and `podman import` (made once and kept in podman's store
# as LADDER_IMAGE_BASE, default localhost/ladder-base:bookworm; `podman rmi` it to make it
# anew), with Debian's python3. podman runs with runc and a containers.conf of ours
# (var/image/containers.conf: no default ulimits), the containers on the host's network.
# As root it installs what is missing (podman, runc, debootstrap; PostgreSQL and Redis)
# with apt-get. With DATABASE_URL and CELERY_BROKER_URL set it uses those servers; otherwise
# it starts a throwaway PostgreSQL and Redis on loopback, as scripts/test.sh does, and stops
# them on exit. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

IMAGE=${LADDER_IMAGE:-localhost/ladder:test}
BASE=${LADDER_IMAGE_BASE:-localhost/ladder-base:bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

log() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
as_root() { [ "$(id -u)" = 0 ]; }
pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
free_port() { .venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }

bash scripts/ensure-venv.sh requirements-dev.txt

use_services=
if [ -n "${DATABASE_URL:-}" ] && [ -n "${CELERY_BROKER_URL:-}" ]; then use_services=1; fi
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ -z "$use_services" ]; then
  [ -n "$(pg_bindir)" ] || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
fi
if [ ${#missing[@]} -gt 0 ]; then
  as_root && command -v apt-get >/dev/null || die "missing ${missing[*]}: apt-get install ${missing[*]}"
  log "installing ${missing[*]} with apt-get (about a minute)"
  apt-get update -qq
  # Debian's scripts must not start PostgreSQL or Redis as services: policy-rc.d's 101 says so.
  made_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d; die "apt-get install ${missing[*]} failed"; }
  [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d
fi

# crun, podman's default runtime, fails here ("setrlimit RLIMIT_NOFILE", then "cgroups in
# hybrid mode not supported"), and so does runc with podman's default ulimits: runc, none.
mkdir -p var/image
cat >var/image/containers.conf <<'EOF'
# Written by scripts/test-image.sh (docs/operations.md, "Containers").
[containers]
default_ulimits = []

[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF=$root/var/image/containers.conf

if podman image exists "$BASE"; then
  log "base image $BASE: present"
else
  as_root || die "making the base image $BASE needs root (debootstrap)"
  tree=$(mktemp -d /var/tmp/ladder-base.XXXXXX)
  log "making the base image $BASE: debootstrap --variant=minbase bookworm (about 2 minutes)"
  debootstrap --variant=minbase bookworm "$tree" "$MIRROR" >var/image/debootstrap.log 2>&1 \
    || { rm -rf "$tree"; tail -n 20 var/image/debootstrap.log >&2; die "debootstrap failed (var/image/debootstrap.log)"; }
  tar -C "$tree" -c . | podman import --quiet - "$BASE" >/dev/null
  rm -rf "$tree"
  log "base image made ($(elapsed))"
fi

# The host's CA bundle goes to pip as a build secret: behind a proxy that intercepts TLS
# (as on these machines) pip trusts the proxy's CA, and elsewhere it is the usual bundle.
secret=()
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then secret=(--secret id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt); fi
log "building $IMAGE on $BASE (steps below; whole log in var/image/build.log)"
if ! podman build --format docker --network host --build-arg "BASE=$BASE" "${secret[@]}" --tag "$IMAGE" \
  --file Containerfile . 2>&1 | tee var/image/build.log | { grep --line-buffered -E '^\[[0-9]/[0-9]\] STEP|^COMMIT' | sed -u -E 's/^(.{100}).+/\1 …/' || true; }; then
  tail -n 30 var/image/build.log >&2
  die "the image did not build (var/image/build.log)"
fi
# The image this build replaced, now untagged (the cached stages stay for the next build).
podman image prune --force --filter label=org.opencontainers.image.title=ladder >/dev/null
log "image built ($(elapsed))"

workdir=
stop_services() {
  local status=$?
  if [ -n "$workdir" ]; then
    if [ -s "$workdir/redis.pid" ]; then kill "$(cat "$workdir/redis.pid")" 2>/dev/null || true; fi
    "${run_pg[@]}" "$(pg_bindir)/pg_ctl" -D "$workdir/pg" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$workdir"
  fi
  exit "$status"
}
run_pg=()
if as_root; then run_pg=(runuser -u postgres --); fi
trap stop_services EXIT
trap 'exit 143' INT TERM

if [ -n "$use_services" ]; then
  log "using the PostgreSQL and Redis of DATABASE_URL and CELERY_BROKER_URL"
else
  workdir=$(mktemp -d /tmp/ladder-image.XXXXXX)
  chmod 755 "$workdir"
  if as_root; then chown postgres:postgres "$workdir"; fi
  pg_port=$(free_port)
  redis_port=$(free_port)
  log "starting PostgreSQL on 127.0.0.1:$pg_port and Redis on 127.0.0.1:$redis_port"
  "${run_pg[@]}" "$(pg_bindir)/initdb" -D "$workdir/pg" -A trust -U postgres --no-sync -E UTF8 >"$workdir/initdb.log" 2>&1 \
    || { cat "$workdir/initdb.log" >&2; die "initdb failed"; }
  "${run_pg[@]}" "$(pg_bindir)/pg_ctl" -D "$workdir/pg" -l "$workdir/pg.log" -w start -o \
    "-p $pg_port -k $workdir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off" \
    >/dev/null || { cat "$workdir/pg.log" >&2; die "PostgreSQL did not start"; }
  "${run_pg[@]}" redis-server --port "$redis_port" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
    --dir "$workdir" --pidfile "$workdir/redis.pid" --logfile "$workdir/redis.log" || die "Redis did not start"
  for _ in $(seq 50); do [ -s "$workdir/redis.pid" ] && break; sleep 0.1; done
  export DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/postgres"
  export CELERY_BROKER_URL="redis://127.0.0.1:$redis_port/0" CACHE_URL="redis://127.0.0.1:$redis_port/1"
fi

log "running the image's test and compose.yaml's"
status=0
LADDER_IMAGE=$IMAGE .venv/bin/python -m pytest -p no:cacheprovider -s -q tests/image tests/test_compose.py "$@" \
  || status=$?
log "make test-image took $(elapsed)"
exit "$status"
