"""Typed readers for settings that come from the environment.

Each helper fails loudly with ``ImproperlyConfigured`` naming the variable, so a typo in a
deployment stops the site at start-up instead of running with a silently wrong value.
"""

from __future__ import annotations

import os
import re
from email.utils import parseaddr
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer; got {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number; got {raw!r}") from None


_RATE = re.compile(r"([1-9][0-9]*)/(s|sec|second|m|min|minute|h|hour|d|day)s?")


def env_rate(name: str, default: str) -> str | None:
    """A rate limit written ``N/second|minute|hour|day`` (``5/hour``); empty turns it off (``None``)."""
    raw = os.environ.get(name, default).strip()
    if not raw:
        return None
    if not _RATE.fullmatch(raw):
        raise ImproperlyConfigured(f"{name} must look like 5/hour (N/second, minute, hour or day); got {raw!r}")
    return raw


_EMAIL_BACKENDS = {
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
    "smtps": "django.core.mail.backends.smtp.EmailBackend",
    "console": "django.core.mail.backends.console.EmailBackend",
    "dummy": "django.core.mail.backends.dummy.EmailBackend",
}
_EMAIL_QUERY = {"tls", "ssl", "timeout"}
EMAIL_TIMEOUT_DEFAULT = 10


def email_settings(url: str) -> dict[str, Any]:
    """Django's ``EMAIL_*`` settings from one ``EMAIL_URL``.

    ``smtp://user:password@host:587/?tls=1`` sends through a server with STARTTLS,
    ``smtps://user:password@host:465`` over TLS from the first byte, ``console://`` prints
    each mail to the terminal and ``dummy://`` drops it. The user name and password are
    percent-decoded (write ``@`` as ``%40``); ``?timeout=`` sets the seconds a connection may
    take (10 by default). Error messages never repeat the URL: it may hold a password.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ImproperlyConfigured(f"EMAIL_URL has a bad port or address: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in _EMAIL_BACKENDS:
        got = f"{scheme}://" if scheme else "no scheme"
        raise ImproperlyConfigured(f"EMAIL_URL must start with smtp://, smtps://, console:// or dummy://; got {got}")
    query = _email_query(parts.query)
    result: dict[str, Any] = {
        "EMAIL_BACKEND": _EMAIL_BACKENDS[scheme],
        "EMAIL_HOST": "localhost",
        "EMAIL_PORT": 25,
        "EMAIL_HOST_USER": "",
        "EMAIL_HOST_PASSWORD": "",
        "EMAIL_USE_TLS": False,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": _email_timeout(query.get("timeout")),
    }
    if scheme in ("console", "dummy"):
        return result  # Django's defaults for the rest, which these backends never read
    if not parts.hostname:
        raise ImproperlyConfigured(f"EMAIL_URL needs a host, like {scheme}://mail.example.org:587")
    use_ssl = scheme == "smtps" or _email_flag(query, "ssl")
    use_tls = _email_flag(query, "tls")
    if use_ssl and use_tls:
        raise ImproperlyConfigured(
            "EMAIL_URL asks for both TLS from the start (smtps:// or ssl=1) and STARTTLS (tls=1); pick one"
        )
    if port == 0:
        raise ImproperlyConfigured("EMAIL_URL has a bad port: 0")
    result.update(
        EMAIL_HOST=parts.hostname,
        EMAIL_PORT=port or (465 if use_ssl else 587 if use_tls else 25),
        EMAIL_HOST_USER=unquote(parts.username or ""),
        EMAIL_HOST_PASSWORD=unquote(parts.password or ""),
        EMAIL_USE_TLS=use_tls,
        EMAIL_USE_SSL=use_ssl,
    )
    return result


def _email_query(query: str) -> dict[str, str]:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ImproperlyConfigured("EMAIL_URL's query must look like ?tls=1&timeout=10") from None
    values = dict(pairs)
    unknown = sorted(set(values) - _EMAIL_QUERY)
    if unknown:
        raise ImproperlyConfigured(f"EMAIL_URL knows only ?tls=, ?ssl= and ?timeout=; got {', '.join(unknown)}")
    return values


def _email_flag(query: dict[str, str], name: str) -> bool:
    raw = query.get(name, "0").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ImproperlyConfigured(f"EMAIL_URL's {name}= must be 1 or 0; got {raw!r}")


def _email_timeout(raw: str | None) -> float:
    if raw is None:
        return EMAIL_TIMEOUT_DEFAULT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= 300:
        raise ImproperlyConfigured(
            f"EMAIL_URL's timeout= must be a number of seconds above 0, at most 300; got {raw!r}"
        )
    return seconds


def env_from_address(name: str, default: str) -> str:
    """A sender like ``Ladder <ladder@example.org>`` or ``ladder@example.org``."""
    raw = os.environ.get(name, default).strip()
    _, address = parseaddr(raw)
    local, _, domain = address.rpartition("@")
    if not local or not domain:
        raise ImproperlyConfigured(f"{name} must be a mail address, like Ladder <ladder@example.org>; got {raw!r}")
    return raw


def env_site_url(name: str, default: str) -> str:
    """The site's origin, ``https://ladder.example.org``, for absolute links; no trailing slash."""
    raw = os.environ.get(name, default).strip().rstrip("/")
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query or parts.fragment:
        raise ImproperlyConfigured(f"{name} must be the site's origin, like https://ladder.example.org; got {raw!r}")
    return raw


def env_origin(name: str, default: str) -> str:
    """An origin another service answers at, ``https://lichess.org``; no trailing slash or path."""
    raw = os.environ.get(name, default).strip().rstrip("/")
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query or parts.fragment:
        raise ImproperlyConfigured(f"{name} must be an origin, like {default}; got {raw!r}")
    return raw


def env_networks(name: str) -> list[IPv4Network | IPv6Network]:
    """A comma-separated list of addresses and networks (``10.0.0.5, 192.168.0.0/24, ::1``)."""
    networks: list[IPv4Network | IPv6Network] = []
    for item in env_list(name, []):
        try:
            networks.append(ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must list IP addresses or networks (10.0.0.5, 192.168.0.0/24); got {item!r}"
            ) from None
    return networks
