"""compose.yaml and the .env it reads, checked without a container engine.

compose.yaml is read with PyYAML and held to the shape the Compose specification requires
(keys it knows, restart policies, healthcheck fields, depends_on conditions, declared
volumes) and to what docs/operations.md promises of it: every service has a healthcheck and
a restart policy, migrations run once before web, workers and beat, and every variable it
reads is documented in .env.example. .env.example, copied to .env as compose reads it, must
leave the production settings as they are with nothing set. nginx's template is checked by
``nginx -t``. ``make test-image`` runs the image itself (tests/image/).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
# The services built from the repository's Containerfile, and the commands its entry point takes.
LADDER_SERVICES = {"migrate", "web", "worker", "mail", "webhooks", "beat"}
ENTRYPOINT_COMMANDS = {"web", "worker", "beat", "manage"}

# From the Compose specification (compose-spec.json): what this file may use.
TOP_LEVEL = {"version", "name", "include", "services", "networks", "volumes", "secrets", "configs"}
SERVICE_KEYS = {
    "image", "build", "command", "entrypoint", "environment", "env_file", "depends_on", "healthcheck",
    "restart", "volumes", "ports", "networks", "user", "working_dir", "labels", "logging", "deploy",
}  # fmt: skip
HEALTHCHECK_KEYS = {"test", "interval", "timeout", "retries", "start_period", "start_interval", "disable"}
RESTART = {"no", "always", "on-failure", "unless-stopped"}
CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}
DURATION = re.compile(r"^(\d+(h|m|s|ms|us|ns))+$")


def env_file(path: Path) -> dict[str, str]:
    """The variables an .env file sets, read as compose reads one: ``NAME=value``, a `` #`` ending
    an unquoted value, lines starting with ``#`` skipped."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, value = line.partition("=")
        values[name.strip()] = re.split(r"\s+#", value, maxsplit=1)[0].strip()
    return values


EXAMPLE = env_file(ROOT / ".env.example")


def test_the_file_has_only_keys_the_compose_specification_knows():
    assert set(COMPOSE) - {key for key in COMPOSE if key.startswith("x-")} <= TOP_LEVEL
    for name, service in SERVICES.items():
        assert set(service) <= SERVICE_KEYS, (name, set(service) - SERVICE_KEYS)
        assert "image" in service or "build" in service, name


def test_every_service_has_a_healthcheck_and_a_restart_policy():
    for name, service in SERVICES.items():
        check = service["healthcheck"]
        assert set(check) <= HEALTHCHECK_KEYS, name
        assert service["restart"] in RESTART, name
        if check.get("disable"):
            # Only the one-off migration: it exits, so it has nothing to check and must not restart.
            assert name == "migrate" and service["restart"] == "no"
            continue
        assert check["test"][0] in {"CMD", "CMD-SHELL"}, name
        for key in ("interval", "timeout", "start_period"):
            assert key not in check or DURATION.match(check[key]), (name, key)
        assert isinstance(check.get("retries", 3), int), name
        assert service["restart"] == "unless-stopped", name


def test_migrations_run_once_before_web_workers_and_beat():
    migrate = SERVICES["migrate"]
    assert migrate["command"] == ["manage", "migrate", "--noinput"]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in LADDER_SERVICES - {"migrate"}:
        assert SERVICES[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully", name


def test_depends_on_names_services_of_the_file_with_known_conditions():
    for name, service in SERVICES.items():
        for other, how in service.get("depends_on", {}).items():
            assert other in SERVICES and other != name, (name, other)
            assert how["condition"] in CONDITIONS, (name, other)


def test_the_image_runs_each_process_by_its_command():
    entrypoint = (ROOT / "deploy" / "entrypoint.sh").read_text()
    for name in LADDER_SERVICES:
        service = SERVICES[name]
        assert service["build"] == {"context": ".", "dockerfile": "Containerfile"}, name
        assert service["env_file"] == ".env", name
        assert service["command"][0] in ENTRYPOINT_COMMANDS, name
        if name != "migrate":
            kind = service["healthcheck"]["test"][-1]
            assert service["healthcheck"]["test"][1:3] == ["/app/deploy/entrypoint.sh", "healthcheck"], name
            assert f"\n      {kind})" in entrypoint, (name, kind)
    assert SERVICES["worker"]["command"][:2] == ["worker", "tasks"]
    assert SERVICES["mail"]["command"][:2] == ["worker", "mail"]
    assert SERVICES["webhooks"]["command"][:2] == ["worker", "webhooks"]
    assert "deploy" not in SERVICES["beat"], "beat must run once: no replicas"


def test_named_volumes_are_declared_and_hold_the_data():
    declared = set(COMPOSE["volumes"])
    used = set()
    for name, service in SERVICES.items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith(("./", "/", "${")):
                if source.startswith("./"):
                    assert (ROOT / source).is_file(), (name, source)
                continue
            assert source in declared, (name, source)
            used.add(source)
    assert used == declared
    assert "postgres-data:/var/lib/postgresql/data" in SERVICES["postgres"]["volumes"]


def test_every_variable_compose_reads_is_in_env_example():
    text = (ROOT / "compose.yaml").read_text()
    interpolated = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", text))
    set_for_the_site = {
        key for name in LADDER_SERVICES for key in SERVICES[name].get("environment", {})
    }  # fmt: skip
    assert interpolated - EXAMPLE.keys() == set()
    assert set_for_the_site - EXAMPLE.keys() == set()
    # The ones compose cannot do without are required there, with a message naming the file.
    for name in ("POSTGRES_PASSWORD", "SERVER_NAME", "TLS_DIR"):
        assert f"${{{name}:?set {name} in .env}}" in text
        assert EXAMPLE[name] == "", f"{name} has no default in .env.example: each site sets its own"


PRINT = (
    "import json; from django.conf import settings as s; print(json.dumps({n: str(getattr(s, n)) "
    "for n in ('DEBUG', 'SECURE_SSL_REDIRECT', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'SECURE_HSTS_SECONDS', "
    "'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_HSTS_PRELOAD', 'STATIC_ROOT', 'STORAGES', 'CELERY_TASK_ALWAYS_EAGER', "
    "'SERVER_EMAIL', 'ALLOWED_HOSTS')}))"
)


def settings_with(env: dict[str, str]) -> str:
    inherited = {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"}
    clean = {k: v for k, v in os.environ.items() if k not in inherited and k not in EXAMPLE}
    clean["DJANGO_SETTINGS_MODULE"] = "config.settings"
    result = subprocess.run(
        [sys.executable, "-c", PRINT], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_env_example_copied_to_env_keeps_the_production_defaults(tmp_path):
    """Each `NAME=` of .env.example sets NAME to nothing under compose; none may turn a default off."""
    production = {
        "DEBUG": "0",
        "SECRET_KEY": "k8#Qe2vX!mR7@pL4zT9wY1nB6cF3hJ0sD5gA8uE2iO7rK4xV9qW1tZ6yN3bM0",
        "ALLOWED_HOSTS": "ladder.example.org",
        "LADDER_VAR_DIR": str(tmp_path),
    }
    copied = {**EXAMPLE, **production}

    assert settings_with(copied) == settings_with(production)


@pytest.mark.skipif(not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists(), reason="needs nginx")
def test_nginx_template_passes_nginx_t(tmp_path):
    """The template as the nginx image renders it (SERVER_NAME filled in), with proxy.conf and a certificate."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    template = (ROOT / "deploy" / "nginx-compose.conf.template").read_text()
    server = template.replace("${SERVER_NAME}", "ladder.example.org")
    # nginx -t resolves the upstream's name; compose's network is not here.
    server = server.replace("server web:8000;", "server 127.0.0.1:8000;").replace("/etc/nginx/", f"{tmp_path}/")
    tls = tmp_path / "tls"
    tls.mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=ladder.example.org",
         "-keyout", tls / "privkey.pem", "-out", tls / "fullchain.pem"],
        check=True, capture_output=True,
    )  # fmt: skip
    shutil.copy(ROOT / "deploy" / "proxy.conf", tmp_path / "ladder-proxy.conf")
    (tmp_path / "default.conf").write_text(server)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid; error_log stderr;\nevents {{}}\nhttp {{ include {tmp_path}/default.conf; }}\n"
    )

    result = subprocess.run(
        [nginx, "-t", "-q", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")], capture_output=True, text=True
    )

    assert result.returncode == 0, result.stderr
