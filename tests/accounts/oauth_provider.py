"""A stand-in for Discord or Lichess on loopback: a small OAuth 2 provider speaking the real protocol.

It answers at the paths the real ones use (Discord: ``/oauth2/authorize``, ``/api/oauth2/token``,
``/api/users/@me``; Lichess: ``/oauth``, ``/api/token``, ``/api/account``, ``/api/account/email``)
and checks what they check: the client id (and Discord's secret), ``response_type=code``, the
PKCE challenge (S256) against the verifier, the grant type, the redirect URI given at the start,
a code used once only and within a minute, and the Bearer token on the profile. The authorize
page is an approve page, with *Approve* and *Deny* buttons, as the person at the provider sees
it; ``approve``/``deny`` press them with ``requests``.

Who is signed in at the provider is ``StandIn.account`` (a dict in the provider's own shape).
``StandIn.break_with`` makes the token endpoint answer garbage or an error instead, so the
site's handling of a provider gone wrong is tested against real HTTP.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import requests

DISCORD_CLIENT_ID = "123456789012345678"
DISCORD_CLIENT_SECRET = "stand-in-discord-secret"
LICHESS_CLIENT_ID = "ladder.test"
PATHS = {
    "discord": {"authorize": "/oauth2/authorize", "token": "/api/oauth2/token", "profile": "/api/users/@me"},
    "lichess": {"authorize": "/oauth", "token": "/api/token", "profile": "/api/account"},
}
SCOPES = {"discord": "identify email", "lichess": "email:read"}


def discord_account(uid: str, username: str, email: str | None = None, *, verified: bool = True) -> dict[str, Any]:
    return {"id": uid, "username": username, "global_name": username.title(), "email": email, "verified": verified}


def lichess_account(username: str, email: str | None = None) -> dict[str, Any]:
    return {"id": username.lower(), "username": username, "email": email}


@dataclass
class Grant:
    account: dict[str, Any]
    redirect_uri: str
    challenge: str
    issued: float


@dataclass
class StandIn:
    kind: str  # "discord" or "lichess"
    account: dict[str, Any] | None = None  # who is signed in at the provider
    break_with: str = ""  # "garbage", "error", "profile" (a profile that is no profile), "" for none
    grants: dict[str, Grant] = field(default_factory=dict)
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    token_requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    @property
    def client_id(self) -> str:
        return DISCORD_CLIENT_ID if self.kind == "discord" else LICHESS_CLIENT_ID

    def authorize_page(self, authorize_url: str) -> requests.Response:
        return requests.get(authorize_url, allow_redirects=False, timeout=5)

    def approve(self, authorize_url: str, *, button: str = "approve") -> str:
        """Open the approve page at ``authorize_url`` and press a button: the address the
        provider sends the browser back to (the site's callback, with a code or an error)."""
        page = self.authorize_page(authorize_url)
        assert page.status_code == 200, page.text
        query = urlsplit(authorize_url).query
        answer = requests.post(
            f"{self.url}{PATHS[self.kind]['authorize']}/decide",
            data={"query": query, "decision": button},
            allow_redirects=False,
            timeout=5,
        )
        assert answer.status_code == 303, answer.text
        return answer.headers["Location"]

    def deny(self, authorize_url: str) -> str:
        return self.approve(authorize_url, button="deny")


def _challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class _Handler(BaseHTTPRequestHandler):
    stand_in: StandIn  # set on the subclass each server gets (``_handler``)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: str, content_type: str = "application/json", **headers: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, value: object) -> None:
        self._send(status, json.dumps(value))

    def _form(self) -> dict[str, str]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode()
        return {key: values[0] for key, values in parse_qs(raw, keep_blank_values=True).items()}

    def _authorize_problem(self, query: dict[str, str]) -> str:
        expected = {"client_id": self.stand_in.client_id, "response_type": "code", "code_challenge_method": "S256"}
        for name, value in expected.items():
            if query.get(name) != value:
                return f"{name} must be {value}"
        if set(query.get("scope", "").split()) != set(SCOPES[self.stand_in.kind].split()):
            return f"scope must be {SCOPES[self.stand_in.kind]}"
        for name in ("redirect_uri", "state", "code_challenge"):
            if not query.get(name):
                return f"{name} is missing"
        return ""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        if parts.path == PATHS[self.stand_in.kind]["authorize"]:
            if problem := self._authorize_problem(query):
                return self._send(400, f"<p>Bad request: {html.escape(problem)}</p>", "text/html")
            return self._send(200, _approve_page(self.stand_in, parts.query), "text/html; charset=utf-8")
        account = self._bearer()
        if account is None:
            return self._json(401, {"error": "No such token"})
        if self.stand_in.break_with == "profile":
            return self._json(200, {"id": 12, "username": ""})
        if parts.path == PATHS[self.stand_in.kind]["profile"] and self.stand_in.kind == "discord":
            return self._json(200, account)
        if parts.path == PATHS[self.stand_in.kind]["profile"]:
            return self._json(200, {"id": account["id"], "username": account["username"], "perfs": {}})
        if parts.path == "/api/account/email" and self.stand_in.kind == "lichess":
            return self._json(200, {"email": account.get("email")})
        return self._json(404, {"error": "Not found"})

    def _bearer(self) -> dict[str, Any] | None:
        kind, _, token = self.headers.get("Authorization", "").partition(" ")
        with self.stand_in.lock:
            return self.stand_in.tokens.get(token) if kind == "Bearer" else None

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        form = self._form()
        if path == PATHS[self.stand_in.kind]["authorize"] + "/decide":
            return self._decide(form)
        if path == PATHS[self.stand_in.kind]["token"]:
            return self._token(form)
        return self._json(404, {"error": "Not found"})

    def _decide(self, form: dict[str, str]) -> None:
        query = {key: values[0] for key, values in parse_qs(form.get("query", "")).items()}
        if problem := self._authorize_problem(query):
            return self._send(400, problem, "text/plain")
        back = {"state": query["state"]}
        if form.get("decision") == "approve" and self.stand_in.account is not None:
            code = secrets.token_urlsafe(16)
            with self.stand_in.lock:
                self.stand_in.grants[code] = Grant(
                    self.stand_in.account, query["redirect_uri"], query["code_challenge"], time.time()
                )
            back = {"code": code, **back}
        else:
            back = {"error": "access_denied", "error_description": "The user denied the request", **back}
        separator = "&" if "?" in query["redirect_uri"] else "?"
        return self._send(303, "", "text/plain", Location=f"{query['redirect_uri']}{separator}{urlencode(back)}")

    def _token(self, form: dict[str, str]) -> None:
        with self.stand_in.lock:
            self.stand_in.token_requests += 1
            grant = self.stand_in.grants.pop(form.get("code", ""), None)  # a code works once
        if self.stand_in.break_with == "garbage":
            return self._send(200, "<html><body>Service Unavailable</body></html>", "text/html")
        if self.stand_in.break_with == "error":
            return self._send(502, "Bad gateway", "text/plain")
        if form.get("client_id") != self.stand_in.client_id:
            return self._json(401, {"error": "invalid_client"})
        if self.stand_in.kind == "discord" and form.get("client_secret") != DISCORD_CLIENT_SECRET:
            return self._json(401, {"error": "invalid_client"})
        if form.get("grant_type") != "authorization_code":
            return self._json(400, {"error": "unsupported_grant_type"})
        if grant is None or time.time() - grant.issued > 60:
            return self._json(400, {"error": "invalid_grant", "error_description": "unknown or used code"})
        if form.get("redirect_uri") != grant.redirect_uri:
            return self._json(400, {"error": "invalid_grant", "error_description": "redirect_uri differs"})
        if _challenge(form.get("code_verifier", "")) != grant.challenge:
            return self._json(400, {"error": "invalid_grant", "error_description": "code_verifier fails"})
        token = secrets.token_urlsafe(24)
        with self.stand_in.lock:
            self.stand_in.tokens[token] = grant.account
        return self._json(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600})


def _handler(stand_in: StandIn) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"stand_in": stand_in})


def _approve_page(stand_in: StandIn, query: str) -> str:
    who = html.escape(stand_in.account["username"]) if stand_in.account else "nobody"
    name = "Discord" if stand_in.kind == "discord" else "Lichess"
    return f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Authorize · {name} stand-in</title></head>
<body>
<main>
<h1>{name} stand-in</h1>
<p>Signed in here as {who}. Let Ladder read your account?</p>
<form method="post" action="{PATHS[stand_in.kind]["authorize"]}/decide">
<input type="hidden" name="query" value="{html.escape(query)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</main>
</body>
</html>"""


class Server:
    """The stand-in served on 127.0.0.1 at a free port, in a thread of its own."""

    def __init__(self, stand_in: StandIn) -> None:
        self.stand_in = stand_in
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stand_in))
        self.httpd.daemon_threads = True
        stand_in.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # shutdown() waits for serve_forever's next poll: the default half second, at every test's end.
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self.stand_in

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port_url() -> str:
    """An address on loopback where nothing listens: a provider that is down."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def serve(settings: Any, kind: str) -> Iterator[StandIn]:
    """A stand-in for ``kind`` running, and the site turned to it (pytest-django's ``settings``)."""
    with Server(StandIn(kind=kind)) as stand_in:
        if kind == "discord":
            settings.DISCORD_CLIENT_ID = DISCORD_CLIENT_ID
            settings.DISCORD_CLIENT_SECRET = DISCORD_CLIENT_SECRET
            settings.DISCORD_BASE_URL = stand_in.url
        else:
            settings.LICHESS_CLIENT_ID = LICHESS_CLIENT_ID
            settings.LICHESS_BASE_URL = stand_in.url
        yield stand_in
