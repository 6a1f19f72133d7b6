"""Sign-in with Discord and with Lichess: the providers and the OAuth 2 exchange with them
(docs/security.md, "Sign-in with Discord or Lichess").

Each provider is an OAuth 2 authorization-code grant with PKCE (S256), run by Authlib's Django
client: ``authorization_redirect`` sends the browser to the provider with a fresh ``state`` and
code challenge kept in the session; ``identity_fetch`` checks the ``state`` that comes back
(once: Authlib removes it as it reads it), swaps the code and the verifier for an access token,
reads the profile with it and forgets the token. Lichess's apps have no secret (PKCE proves the
client); Discord's send theirs in the token request too.

What comes back is an ``Identity``: the provider's own stable id, the name there, and an email
address only when the provider says it verified it (Discord's ``verified``; Lichess confirms
every address before it lets it be used, and gives it only under the ``email:read`` scope).
Everything the provider answers is checked before use: a provider that is down, slow or
answers garbage is a ``ProviderError`` with a message for people, never a 500.

A provider is on when its client id is set (``DISCORD_CLIENT_ID``, ``LICHESS_CLIENT_ID``); its
base URL is a setting too, so a self-hosted Lichess, or the tests' stand-in on loopback, is
reached instead (``tests/accounts/oauth_provider.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import wraps
from typing import Any

import requests
from authlib.integrations.base_client import MismatchingStateError, OAuthError
from authlib.integrations.django_client import DjangoOAuth2App, OAuth
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from accounts.models import OAuthProvider

logger = logging.getLogger(__name__)

# Seconds to connect to a provider, and to wait for each answer: the browser waits meanwhile.
TIMEOUT = (3.05, 10)
PENDING_KEY = "oauth_pending"  # in the session: an identity with no account yet, until a name is chosen
PENDING_SECONDS = 30 * 60

STATE_LOST = "That sign-in with {provider} had expired or was already used, so nothing happened. Start again."
DENIED = "You did not let {site} read your {provider} account, so nothing happened."
REFUSED = "{provider} refused the sign-in ({error}), so nothing happened. Try again in a moment."
UNREADABLE = "{provider} did not answer as expected, so nothing happened. Try again in a few minutes."
UNREACHABLE = "{provider} could not be reached, so nothing happened. Try again in a few minutes."
TURNED_OFF = "Signing in with {provider} is not turned on on this site."


class ProviderError(Exception):
    """Why a sign-in with a provider went nowhere, in words for the person trying (``str(error)``)."""


@dataclass(frozen=True, slots=True)
class Provider:
    """One provider as this site is set up to use it."""

    key: OAuthProvider
    base_url: str
    client_id: str
    client_secret: str  # "" for Lichess: its apps have none
    authorize_path: str
    token_path: str
    profile_path: str
    scope: str

    @property
    def label(self) -> str:
        return str(self.key.label)


def _providers() -> list[Provider]:
    """Every provider, on or off, as the settings have them now (tests change them)."""
    return [
        Provider(
            key=OAuthProvider.DISCORD,
            base_url=settings.DISCORD_BASE_URL,
            client_id=settings.DISCORD_CLIENT_ID,
            client_secret=settings.DISCORD_CLIENT_SECRET,
            authorize_path="/oauth2/authorize",
            token_path="/api/oauth2/token",
            profile_path="/api/users/@me",
            scope="identify email",
        ),
        Provider(
            key=OAuthProvider.LICHESS,
            base_url=settings.LICHESS_BASE_URL,
            client_id=settings.LICHESS_CLIENT_ID,
            client_secret="",
            authorize_path="/oauth",
            token_path="/api/token",
            profile_path="/api/account",
            scope="email:read",
        ),
    ]


def providers_enabled() -> list[Provider]:
    """The providers this site offers: those whose client id is set."""
    return [provider for provider in _providers() if provider.client_id]


def provider_get(key: str) -> Provider | None:
    """The provider named ``key`` if this site offers it; ``None`` for one turned off."""
    return next((provider for provider in providers_enabled() if provider.key == key), None)


def provider_label(key: str) -> str:
    """A provider's name for people, on or off: "Discord"."""
    return str(OAuthProvider(key).label) if key in OAuthProvider.values else key


def provider_origins() -> list[str]:
    """The origins the browser is sent to when a sign-in starts: a form posting to the start
    is redirected there, so the page's ``form-action`` must allow them (Chromium checks it on
    the redirects after a form's POST)."""
    return sorted({provider.base_url for provider in providers_enabled()})


def oauth_form_action(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Lets the page's forms lead to the providers: Chromium checks ``form-action`` on the
    redirect after the start's POST, so a page with a sign-in or link button allows the
    enabled providers' origins there (and nothing more)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if origins := provider_origins():
            update = dict(getattr(response, "_csp_update", None) or {})
            update["form-action"] = [*update.get("form-action", []), *origins]
            response._csp_update = update  # type: ignore[attr-defined]  # django-csp reads it
        return response

    return wrapped


@dataclass(frozen=True, slots=True)
class Identity:
    """An account at a provider, as its profile gave it."""

    provider: str
    uid: str  # the provider's stable id: Discord's snowflake, Lichess's lower-case id
    name: str  # the name there
    email: str  # "" unless the provider says the address is verified

    def to_session(self, *, now: float) -> dict[str, Any]:
        return {**asdict(self), "at": now}

    @classmethod
    def from_session(cls, data: object, *, now: float) -> Identity | None:
        """The identity kept in the session, unless it is missing, malformed or older than ``PENDING_SECONDS``."""
        if not isinstance(data, dict) or not isinstance(data.get("at"), int | float):
            return None
        if now - data["at"] > PENDING_SECONDS:
            return None
        fields = {name: data.get(name) for name in ("provider", "uid", "name", "email")}
        if not all(isinstance(value, str) for value in fields.values()) or fields["provider"] not in OAuthProvider:
            return None
        return cls(**fields)  # type: ignore[arg-type]


def _client(provider: Provider) -> DjangoOAuth2App:
    """Authlib's client for ``provider``, made afresh from the settings as they are now."""
    oauth = OAuth()
    client: DjangoOAuth2App = oauth.register(
        name=provider.key.value,
        client_id=provider.client_id,
        client_secret=provider.client_secret or None,
        authorize_url=provider.base_url + provider.authorize_path,
        access_token_url=provider.base_url + provider.token_path,
        user_agent=f"{settings.SITE_NAME} ({settings.SITE_URL})",
        client_kwargs={
            "scope": provider.scope,
            "code_challenge_method": "S256",
            "token_endpoint_auth_method": "client_secret_post" if provider.client_secret else "none",
            "default_timeout": TIMEOUT,
        },
    )
    return client


def authorization_redirect(
    *, request: HttpRequest, provider: Provider, redirect_uri: str, **data: Any
) -> HttpResponseRedirect:
    """Send the browser to ``provider`` to approve this site; ``data`` (JSON values: who is
    linking, where to go after) is kept with the state and read back by ``authorization_data``."""
    client = _client(provider)
    authorization = client.create_authorization_url(redirect_uri)
    client.save_authorize_data(request, redirect_uri=redirect_uri, ours=data, **authorization)
    return HttpResponseRedirect(authorization["url"])


def authorization_data(*, request: HttpRequest, provider: Provider) -> dict[str, Any] | None:
    """What ``authorization_redirect`` kept for the ``state`` this callback brought back, or
    ``None`` when there is no such state in the session (expired, used, or not this browser's)."""
    state = request.GET.get("state")
    if not state:
        return None
    data = _client(provider).framework.get_state_data(request.session, state)
    if not isinstance(data, dict):
        return None
    ours = data.get("ours")
    return ours if isinstance(ours, dict) else {}


def identity_fetch(*, request: HttpRequest, provider: Provider) -> Identity:
    """The identity this callback brings: the ``state`` checked and used up, the code swapped
    for a token, the profile read. Raises ``ProviderError`` saying why not."""
    words = {"provider": provider.label, "site": settings.SITE_NAME}
    client = _client(provider)
    state = request.GET.get("state", "")
    if error := request.GET.get("error"):
        client.framework.clear_state_data(request.session, state)
        if error == "access_denied":
            raise ProviderError(DENIED.format(**words))
        raise ProviderError(REFUSED.format(error=error[:60], **words))
    if not state or not request.GET.get("code"):
        raise ProviderError(STATE_LOST.format(**words))
    try:
        token = client.authorize_access_token(request)
        access = token.get("access_token") if isinstance(token, dict) else None
        if not isinstance(access, str) or not access:
            raise ValueError("no access_token in the token answer")
        bearer = {"access_token": access, "token_type": "Bearer"}
        profile = _json(client.get(provider.base_url + provider.profile_path, token=bearer))
        if provider.key == OAuthProvider.DISCORD:
            return _discord(profile)
        return _lichess(profile, email=_lichess_email(client, provider, bearer))
    except MismatchingStateError:
        raise ProviderError(STATE_LOST.format(**words)) from None
    except OAuthError as exc:
        logger.warning("%s refused a code: %s", provider.label, exc.error)
        raise ProviderError(REFUSED.format(error=str(exc.error)[:60], **words)) from None
    except (requests.ConnectionError, requests.Timeout) as exc:
        logger.warning("%s could not be reached: %s", provider.label, exc)
        raise ProviderError(UNREACHABLE.format(**words)) from None
    except (requests.RequestException, ValueError, KeyError, TypeError) as exc:
        logger.warning("%s answered something unreadable: %s", provider.label, exc)
        raise ProviderError(UNREADABLE.format(**words)) from None


def _json(response: requests.Response) -> dict[str, Any]:
    response.raise_for_status()
    body = response.json()
    if not isinstance(body, dict):
        raise ValueError("a profile is a JSON object")
    return body


def _text(value: object, *, limit: int) -> str:
    """A provider's id or name: a non-empty string of at most ``limit`` printable characters."""
    if not isinstance(value, str) or not value.strip() or len(value) > limit or not value.isprintable():
        raise ValueError(f"not an id or a name: {value!r:.80}")
    return value.strip()


def _email(value: object) -> str:
    if isinstance(value, str) and 3 <= len(value) <= 254 and "@" in value and value.isprintable() and " " not in value:
        return value
    return ""


def _discord(profile: dict[str, Any]) -> Identity:
    verified = profile.get("verified") is True
    return Identity(
        provider=OAuthProvider.DISCORD.value,
        uid=_text(profile.get("id"), limit=64),
        name=_text(profile.get("username"), limit=100),
        email=_email(profile.get("email")) if verified else "",
    )


def _lichess(profile: dict[str, Any], *, email: str) -> Identity:
    return Identity(
        provider=OAuthProvider.LICHESS.value,
        uid=_text(profile.get("id"), limit=64),
        name=_text(profile.get("username"), limit=100),
        email=email,
    )


def _lichess_email(client: DjangoOAuth2App, provider: Provider, bearer: dict[str, str]) -> str:
    """Lichess's address for the account: one it confirmed; "" if it gives none (the address
    is a convenience, so its failure does not stop the sign-in)."""
    try:
        return _email(_json(client.get(provider.base_url + "/api/account/email", token=bearer)).get("email"))
    except (requests.RequestException, ValueError) as exc:
        logger.warning("Lichess gave no address: %s", exc)
        return ""


def pending_identity(request: HttpRequest) -> Identity | None:
    """The identity waiting in this session for a name to be chosen, if any and still fresh."""
    return Identity.from_session(request.session.get(PENDING_KEY), now=time.time())


def pending_keep(request: HttpRequest, identity: Identity) -> None:
    request.session[PENDING_KEY] = identity.to_session(now=time.time())


def pending_forget(request: HttpRequest) -> None:
    request.session.pop(PENDING_KEY, None)
