"""LOG_FORMAT=json: a command's log is one JSON object a line, with the request's id and path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

SCRIPT = """
import logging
from django.test import Client
log = logging.getLogger("ladder.check")
log.warning("plain %s", "line")
try:
    1 / 0
except ZeroDivisionError:
    log.exception("it failed")
Client().get("/no/such/page/", HTTP_HOST="localhost", HTTP_X_REQUEST_ID="req-1234")
Client().get("/no/such/page/", HTTP_HOST="localhost", HTTP_X_REQUEST_ID="<script>")
"""


def run(tmp_path: Path, log_format: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL", "SENTRY_DSN")
    }
    env.update(LOG_FORMAT=log_format, LADDER_VAR_DIR=str(tmp_path), PYTHONWARNINGS="ignore")
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-startup", "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def test_each_stderr_line_is_one_json_object(tmp_path):
    lines = run(tmp_path, "json").stderr.splitlines()
    entries = [json.loads(line) for line in lines]  # every line parses, or this fails

    assert all({"time", "level", "logger", "message"} <= set(entry) for entry in entries)
    assert all(entry["time"].endswith("+00:00") for entry in entries)
    plain = next(entry for entry in entries if entry["message"] == "plain line")
    assert (plain["level"], plain["logger"]) == ("WARNING", "ladder.check")
    assert "request_id" not in plain and "path" not in plain  # outside a request
    failed = next(entry for entry in entries if entry["message"] == "it failed")
    assert failed["level"] == "ERROR"
    assert failed["exception"].startswith("Traceback (most recent call last):")
    assert failed["exception"].rstrip().endswith("ZeroDivisionError: division by zero")
    not_found = [entry for entry in entries if entry["logger"] == "django.request"]
    assert [entry["path"] for entry in not_found] == ["/no/such/page/", "/no/such/page/"]
    assert not_found[0]["request_id"] == "req-1234"  # the proxy's id, when it is sane
    assert not_found[1]["request_id"] != "<script>" and len(not_found[1]["request_id"]) == 32  # else a new one


def test_text_logs_stay_lines_of_text(tmp_path):
    stderr = run(tmp_path, "text").stderr

    assert " WARNING ladder.check plain line" in stderr
    assert not stderr.lstrip().startswith("{")
