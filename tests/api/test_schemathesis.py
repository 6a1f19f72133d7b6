"""Schemathesis over the published schema against a live server, authenticated.

Bounded (50 examples per operation, a fixed seed) and strict about what matters: no 5xx
for any input, and every response matches the schema (status codes, content types,
bodies). It runs the CLI against pytest-django's live server, like a client would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

from api.services import token_create

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


@pytest.mark.django_db(transaction=True)
@override_settings(API_THROTTLE_RATES={"anon": None, "token": None, "user": None})
def test_schemathesis_finds_no_server_error_or_schema_violation(live_server, tmp_path: Path, player, opponent):
    _, secret = token_create(user=player, name="schemathesis")
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "run",
        f"{live_server.url}/api/v1/schema/",
        "--url",
        live_server.url,
        "-n",
        os.environ.get("SCHEMATHESIS_EXAMPLES", "50"),
        "--seed",
        "20261122",
        "--checks",
        CHECKS,
        "--phases",
        "examples,coverage,fuzzing",
        "--header",
        f"Authorization: Bearer {secret}",
        "--request-timeout",
        "20",
        "--workers",
        "1",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
