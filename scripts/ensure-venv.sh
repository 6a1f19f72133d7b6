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
if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ]; then
  echo "==> installing $requirements into .venv"
  # Every pin carries its hashes (pip-compile, from requirements*.in): a file that changed on
  # the way, or a dependency left unpinned, is refused. --no-compile: pip would compile every
  # module of every package (20 s of the 55 s an install takes here), most of which nothing
  # imports; Python compiles the ones imported on first use and keeps them in __pycache__.
  .venv/bin/python -m pip install --quiet --no-compile --disable-pip-version-check --require-hashes -r "$requirements"
  touch "$stamp"
fi
