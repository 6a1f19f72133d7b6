"""The container image run as a deployment runs it: web, worker and beat containers on the host's network.

``make test-image`` (scripts/test-image.sh) builds the image from ``Containerfile`` on a Debian
base made here, starts a PostgreSQL and a Redis on loopback, and runs this module with
``LADDER_IMAGE`` naming the image; without it the module is skipped, so ``make test`` stays as
fast as it was. On a database of its own and a Celery queue of its own, the test

1. runs ``migrate``, ``createsuperuser`` and a one-off ``shell`` through the image,
2. starts web, worker and beat containers (host network, web on a free port),
3. signs two players up through the site's form and makes each an API token on the site,
4. reports a game through the API and confirms it (the site rates it at once),
5. has the superuser correct the result through the API: the replay job that re-rates the
   ladder runs in the worker, and the test polls the API until the ratings show the new result,
6. waits for beat's queue sweep to reach the worker, and for the worker's and beat's healthchecks,

then removes every container and drops the database, whatever the outcome.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import requests

IMAGE = os.environ.get("LADDER_IMAGE", "")
pytestmark = pytest.mark.skipif(not IMAGE, reason="builds and runs the container image: make test-image")

LADDER = "image-test"
PASSWORD = "image-test-pass-7"
ROOT_PASSWORD = "image-test-root-pass-7"
WAIT_SECONDS = 120


def step(message: str) -> None:
    print(f"==> {message}", flush=True)


def podman(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check, timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, probe: Callable[[], Any], seconds: float = WAIT_SECONDS) -> Any:
    """``probe()``'s first truthy answer, tried every half second; fails naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = probe()
        if answer:
            return answer
        time.sleep(0.5)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@dataclass
class Deployment:
    """The containers of one test run, on one database and one Celery queue."""

    run: str
    env: dict[str, str]
    base_url: str
    started: list[str]

    def environment(self) -> list[str]:
        return [arg for key, value in self.env.items() for arg in ("--env", f"{key}={value}")]

    def one_off(self, *command: str, env: dict[str, str] | None = None) -> str:
        """Run ``command`` in a throwaway container of the image, as a deploy runs ``migrate``."""
        extra = [arg for key, value in (env or {}).items() for arg in ("--env", f"{key}={value}")]
        result = podman(
            "run", "--rm", "--network", "host", "--no-healthcheck", *self.environment(), *extra, IMAGE, *command,
            check=False,
        )  # fmt: skip
        assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def start(self, role: str, *command: str, health: str) -> str:
        """A long-running container; its healthcheck is kept but run only when the test asks."""
        name = f"ladder-{self.run}-{role}"
        podman(
            "run", "--detach", "--name", name, "--network", "host", *self.environment(),
            "--health-cmd", f"/app/deploy/entrypoint.sh healthcheck {health}", "--health-interval", "disable",
            IMAGE, *command,
        )  # fmt: skip
        self.started.append(name)
        return name

    def logs(self, name: str) -> str:
        result = podman("logs", name, check=False)
        return result.stdout + result.stderr

    def healthy(self, name: str) -> bool:
        return podman("healthcheck", "run", name, check=False, timeout=60).returncode == 0


@pytest.fixture
def deployment() -> Iterator[Deployment]:
    database_url = os.environ.get("DATABASE_URL", "")
    broker_url = os.environ.get("CELERY_BROKER_URL", "")
    if not database_url.startswith("postgres") or not broker_url.startswith("redis"):
        pytest.fail("make test-image gives the test a PostgreSQL (DATABASE_URL) and a Redis (CELERY_BROKER_URL)")
    run = secrets.token_hex(4)
    database = f"ladder_image_{run}"
    admin_url = with_database(database_url, "postgres")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    port = free_port()
    env = {
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        # Plain HTTP on loopback, as `make stack` serves it: no HTTPS redirect or secure-only cookies.
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
        "DATABASE_URL": with_database(database_url, database),
        "CELERY_BROKER_URL": broker_url,
        "CACHE_URL": os.environ.get("CACHE_URL", broker_url),
        # A queue of its own, so nothing else on that Redis takes these tasks, nor these containers theirs.
        "CELERY_QUEUE": f"image-{run}",
        "WEB_BIND": f"127.0.0.1:{port}",
        "WEB_WORKERS": "2",
        # The superuser acts through the API with a token; a second factor is the browser tests' business.
        "TWO_FACTOR_FOR_STAFF": "0",
        "SIGNUP_RATE": "100/hour",
        "EMAIL_URL": "console://",
    }
    deployment = Deployment(run=run, env=env, base_url=f"http://127.0.0.1:{port}", started=[])
    try:
        yield deployment
    finally:
        step("stopping and removing the containers")
        for name in deployment.started:
            podman("rm", "--force", "--time", "5", name, check=False, timeout=60)
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        leftover = podman("ps", "--all", "--quiet", "--filter", f"name=ladder-{run}-", check=False).stdout.strip()
        assert not leftover, f"containers left behind: {leftover}"


def form_fields(html: str) -> dict[str, str]:
    """The hidden inputs of a page's forms (the CSRF token, a form's one-time key)."""
    fields = {}
    for tag in re.findall(r"<input\b[^>]*>", html):
        name = re.search(r'\bname="([^"]+)"', tag)
        value = re.search(r'\bvalue="([^"]*)"', tag)
        if name and 'type="hidden"' in tag:
            fields[name.group(1)] = value.group(1) if value else ""
    return fields


def form_errors(html: str) -> list[str]:
    return re.findall(r'<ul class="errorlist"[^>]*>(.*?)</ul>', html, flags=re.S)


def sign_up(base_url: str, username: str) -> requests.Session:
    """A player signed up through the site's form (a real POST carrying its CSRF token), signed in."""
    session = requests.Session()
    page = session.get(f"{base_url}/accounts/signup/", timeout=10)
    assert page.status_code == 200
    answer = session.post(
        f"{base_url}/accounts/signup/",
        data={
            **form_fields(page.text),
            "username": username,
            "email": "",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
        headers={"Referer": f"{base_url}/accounts/signup/"},
        timeout=10,
        allow_redirects=False,
    )
    assert answer.status_code == 302, form_errors(answer.text)
    assert "sessionid" in session.cookies
    return session


def log_in(base_url: str, username: str, password: str) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{base_url}/accounts/login/", timeout=10)
    answer = session.post(
        f"{base_url}/accounts/login/",
        data={**form_fields(page.text), "username": username, "password": password},
        headers={"Referer": f"{base_url}/accounts/login/"},
        timeout=10,
        allow_redirects=False,
    )
    assert answer.status_code == 302, form_errors(answer.text)
    return session


def api_token(base_url: str, session: requests.Session) -> str:
    """A token made on the site's token page, as docs/api.md tells a bot's owner to."""
    page = session.get(f"{base_url}/accounts/tokens/", timeout=10)
    assert page.status_code == 200
    answer = session.post(
        f"{base_url}/accounts/tokens/",
        data={**form_fields(page.text), "name": "image test"},
        headers={"Referer": f"{base_url}/accounts/tokens/"},
        timeout=10,
    )
    assert answer.status_code == 200, form_errors(answer.text)
    found = re.search(r'id="new-token"[^>]*>([^<]+)<', answer.text)
    assert found, "the token page shows no new token"
    return found.group(1).strip()


class Api:
    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = f"{base_url}/api/v1"
        self.headers = {"Authorization": f"Bearer {token}"}

    def get(self, path: str) -> Any:
        answer = requests.get(f"{self.base_url}/{path}", headers=self.headers, timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def post(self, path: str, body: dict[str, Any], status: int) -> Any:
        answer = requests.post(f"{self.base_url}/{path}", json=body, headers=self.headers, timeout=10)
        assert answer.status_code == status, answer.text
        return answer.json()


def rating_of(api: Api, username: str) -> float:
    ratings = api.get(f"players/{username}/")["ratings"]
    return next(float(row["rating"]) for row in ratings if row["ladder"] == LADDER)


def ran(task: str, log: str) -> bool:
    """Whether a worker's log shows ``task`` run to success (its banner lists every task it knows)."""
    return re.search(rf"Task {re.escape(task)}\[[0-9a-f-]+\] succeeded", log) is not None


def answers_200(url: str) -> bool:
    try:
        return requests.get(url, timeout=5, allow_redirects=False).status_code == 200
    except requests.RequestException:
        return False


def test_image_runs_the_site_its_worker_and_beat(deployment: Deployment) -> None:
    step(f"migrating database through the image {IMAGE}")
    out = deployment.one_off("manage", "migrate", "--noinput")
    assert "Applying accounts" in out or "No migrations to apply" in out, out
    deployment.one_off(
        "manage", "createsuperuser", "--noinput",
        env={"DJANGO_SUPERUSER_USERNAME": "root", "DJANGO_SUPERUSER_PASSWORD": ROOT_PASSWORD,
             "DJANGO_SUPERUSER_EMAIL": "root@example.org"},
    )  # fmt: skip
    # Moderators make ladders in the admin. This one lets new accounts report games played
    # elsewhere, and does not hold results between accounts that signed in from one address
    # (both players come from loopback).
    deployment.one_off(
        "manage", "shell", "-c",
        f"from ladder.models import Ladder; Ladder.objects.create(slug={LADDER!r}, name='Image test', "
        "new_account_hours=0, watch_shared_prints=False)",
    )  # fmt: skip

    step("starting web, worker and beat containers")
    web = deployment.start("web", "web", health="web")
    worker = deployment.start("worker", "worker", health="worker")
    beat = deployment.start("beat", "beat", health="beat")
    base = deployment.base_url
    # Ready: the database answers with every migration applied, Redis answers, a worker has
    # written its heartbeat and beat has sent what was due (monitoring/health.py).
    wait_for(f"{base}/readyz to answer 200", lambda: answers_200(f"{base}/readyz"))
    step(f"the site is ready at {base}")
    assert deployment.healthy(web), "the web container's HEALTHCHECK fails while /readyz answers 200"

    step("signing up two players through the site, and making their API tokens there")
    anna_session, boris_session = sign_up(base, "anna"), sign_up(base, "boris")
    anna, boris = Api(base, api_token(base, anna_session)), Api(base, api_token(base, boris_session))
    assert anna.get("me/")["username"] == "anna"
    anna.post(f"ladders/{LADDER}/membership/", {}, 201)
    boris.post(f"ladders/{LADDER}/membership/", {}, 201)

    step("reporting a game through the API; the opponent confirms it")
    match = anna.post(
        "matches/",
        {"ladder": LADDER, "sides": [{"players": ["anna"], "placement": 1}, {"players": ["boris"], "placement": 2}]},
        201,
    )
    assert match["status"] == "pending"
    assert boris.post(f"matches/{match['id']}/confirm/", {}, 200)["status"] == "confirmed"
    assert rating_of(anna, "anna") > rating_of(anna, "boris")

    step("the superuser corrects the result; the worker re-rates the ladder")
    root = Api(base, api_token(base, log_in(base, "root", ROOT_PASSWORD)))
    job = root.post(f"matches/{match['id']}/correct/", {"placements": [2, 1], "reason": "sides swapped"}, 202)
    status = wait_for(
        "the worker to run the replay job",
        lambda: (answer := root.get(f"replay-jobs/{job['job']['id']}/"))["status"] in {"done", "failed"} and answer,
    )
    assert status["status"] == "done", status
    assert rating_of(anna, "boris") > rating_of(anna, "anna")
    assert ran("ratings.tasks.run_replay_job_task", deployment.logs(worker))

    step("waiting for beat's queue sweep to reach the worker")
    wait_for(
        "the worker to run the sweep beat sends every 15 s",
        lambda: ran("matchmaking.tasks.sweep_queue_task", deployment.logs(worker)),
    )
    assert "Sending due task Matchmaking queue sweep" in deployment.logs(beat)
    assert deployment.healthy(worker), "the worker container's healthcheck fails"
    # Beat writes what it sent to the database once it has sent something, then every 3 minutes.
    wait_for("beat's healthcheck to pass", lambda: deployment.healthy(beat), seconds=60)
    assert podman("inspect", "--format", "{{.State.Running}}", web, beat).stdout.split() == ["true", "true"]
    assert "Traceback" not in deployment.logs(web) + deployment.logs(worker) + deployment.logs(beat)
