"""The Makefile's recipes, as make expands them (``make -n``), run with the script swapped out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stack_site_url(*arguments: str, site_url: str | None = None) -> str:
    """The SITE_URL ``make stack`` hands scripts/stack.sh (the recipe run with ``printenv`` in its place)."""
    # Under `make test` this runs inside make: its MAKEFLAGS and level must not reach the inner make.
    dropped = ("SITE_URL", "HOST", "PORT", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
    env = {key: value for key, value in os.environ.items() if key not in dropped}
    if site_url is not None:
        env["SITE_URL"] = site_url
    recipe = subprocess.run(
        ["make", "--no-print-directory", "-n", "stack", *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert recipe.count("bash scripts/stack.sh") == 1, recipe
    command = recipe.replace("bash scripts/stack.sh", "printenv SITE_URL")
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_make_stack_links_mails_to_the_port_it_serves():
    assert stack_site_url() == "http://127.0.0.1:8000"
    assert stack_site_url("PORT=9000") == "http://127.0.0.1:9000"


def test_make_stack_keeps_a_configured_site_url():
    assert stack_site_url("PORT=9000", site_url="https://ladder.example.org") == "https://ladder.example.org"
