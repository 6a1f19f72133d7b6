#!/usr/bin/env bash
# Creates .venv with the given requirements file installed. On a fresh Debian machine
# `python3 -m venv` needs the python3-venv package; as root it is installed with apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
requirements=${1:-requirements.txt}

if [ ! -x .venv/bin/python ]; then
  rm -rf .venv
  if ! "$python" -m venv .venv >/dev/null 2>&1; then
    rm -rf .venv
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "==> installing python3-venv (Debian splits venv out of Python)"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      "$python" -m venv .venv
    else
      echo "error: '$python -m venv' failed; install python3-venv (sudo apt-get install python3-venv)" >&2
      exit 1
    fi
  fi
fi
stamp=".venv/.installed-$(basename "$requirements")"
if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ requirements-uv.txt -nt "$stamp" ]; then
  echo "==> installing $requirements into .venv"
  # Every pin carries its hashes (pip-compile, from requirements*.in): a file that changed on
  # the way, or a dependency left unpinned, is refused. uv installs them (fetching and unpacking
  # in parallel: about 8 s where pip took 30 s), itself installed by pip from requirements-uv.txt,
  # hashes required too. Should uv fail (a machine it has no build for), pip installs them.
  # Neither compiles every module of every package first: Python compiles the ones a run
  # imports and keeps them in __pycache__.
  uv_pin=$(sed -n 's/^uv==\([^ ]*\).*/\1/p' requirements-uv.txt)
  if [ "$(.venv/bin/uv --version 2>/dev/null)" != "uv $uv_pin" ]; then
    .venv/bin/python -m pip install --quiet --no-compile --disable-pip-version-check --require-hashes \
      -r requirements-uv.txt || true
  fi
  if ! { [ -x .venv/bin/uv ] && .venv/bin/uv pip install --quiet --python .venv/bin/python --require-hashes \
    --link-mode copy -r "$requirements"; }; then
    echo "==> uv could not install $requirements; installing it with pip"
    .venv/bin/python -m pip install --quiet --no-compile --disable-pip-version-check --require-hashes -r "$requirements"
  fi
  touch "$stamp"
fi
