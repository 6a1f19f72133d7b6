"""Accounts linked to Discord or Lichess: signing in with one, linking, unlinking, and the
account a first sign-in makes (docs/security.md, "Sign-in with Discord or Lichess").

An identity (``accounts.oauth.Identity``) is found by the provider's own id, never by its
email address: the same address at a provider and here never joins two accounts. A first
sign-in makes a new account only once its owner chose a name; if the provider's verified
address already belongs to an account here, the owner is told to sign in to that account and
link from *Settings* instead.
"""

from __future__ import annotations

import secrets
import unicodedata
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q

from accounts.models import LinkedIdentity, OAuthProvider, User
from accounts.oauth import Identity
from accounts.validators import USERNAME_MAX_LENGTH, UsernameValidator, username_normal, username_skeleton

LINKED_ELSEWHERE = (
    "This {provider} account is linked to another account here. Sign in with it, unlink it in that "
    "account's Settings, then link it here."
)
ALREADY_LINKED = "Your account is linked to another {provider} account ({name}). Unlink it first."
UNLINK_ONLY_WAY = (
    "{provider} stays linked: it is the only way into your account, which has no password and no other "
    "linked account. Set a password first: “Forgot your password?” mails a link to {email}."
)
UNLINK_ONLY_WAY_NO_ADDRESS = (
    "{provider} stays linked: it is the only way into your account, which has no password and no other "
    "linked account. Add an email address under Profile, then ask for a password with “Forgot your password?”."
)
NOT_LINKED = "Your account is not linked to {provider}."
FALLBACK_NAME = "player"


def identity_account(*, identity: Identity) -> LinkedIdentity | None:
    """The link of ``identity`` to an account here, with its account, if it has one."""
    return LinkedIdentity.objects.select_related("user").filter(provider=identity.provider, uid=identity.uid).first()


def identity_used(*, link: LinkedIdentity, identity: Identity, now: datetime) -> None:
    """A sign-in with ``link``: when, and the name there as the provider gives it now."""
    link.last_used_at = now
    link.name = identity.name
    link.save(update_fields=["last_used_at", "name"])


def identity_link(*, user: User, identity: Identity, now: datetime) -> LinkedIdentity:
    """Link ``identity`` to ``user``; a ``ValidationError`` when it is linked elsewhere, or
    ``user`` has another account at that provider linked."""
    label = OAuthProvider(identity.provider).label
    with transaction.atomic():
        mine = LinkedIdentity.objects.filter(user=user, provider=identity.provider).first()
        if mine is not None and mine.uid != identity.uid:
            raise ValidationError(ALREADY_LINKED.format(provider=label, name=mine.name), code="already_linked")
        if mine is not None:
            identity_used(link=mine, identity=identity, now=now)
            return mine
        try:
            with transaction.atomic():
                return LinkedIdentity.objects.create(
                    user=user, provider=identity.provider, uid=identity.uid, name=identity.name, linked_at=now
                )
        except IntegrityError:  # linked to another account (or, at the same moment, to this one)
            raise ValidationError(LINKED_ELSEWHERE.format(provider=label), code="linked_elsewhere") from None


def identity_unlink(*, user: User, provider: str) -> None:
    """Unlink ``user``'s account at ``provider``, unless it is the only way into the account."""
    label = OAuthProvider(provider).label
    with transaction.atomic():
        user = User.objects.select_for_update().get(pk=user.pk)  # two unlinks at once leave one way in
        links = list(LinkedIdentity.objects.filter(user=user))
        link = next((each for each in links if each.provider == provider), None)
        if link is None:
            raise ValidationError(NOT_LINKED.format(provider=label), code="not_linked")
        if len(links) == 1 and not user.has_usable_password():
            message = UNLINK_ONLY_WAY.format(provider=label, email=user.email) if user.email else None
            raise ValidationError(message or UNLINK_ONLY_WAY_NO_ADDRESS.format(provider=label), code="only_way_in")
        link.delete()


def identity_account_create(*, identity: Identity, username: str, email: str, now: datetime) -> User:
    """A new account for ``identity``: the chosen name, no password (it signs in through the
    provider until one is set by mail), and ``email``, verified only when it is the address
    the provider verified. Raises ``IntegrityError`` when the name, the address or the
    identity was taken since the form checked them."""
    verified = bool(email) and bool(identity.email) and email.casefold() == identity.email.casefold()
    with transaction.atomic():
        user = User(username=username, email=email, email_verified=email if verified else "")
        user.set_unusable_password()
        user.save()
        LinkedIdentity.objects.create(
            user=user, provider=identity.provider, uid=identity.uid, name=identity.name, linked_at=now, last_used_at=now
        )
    return user


def username_free(name: str) -> bool:
    """Whether a new account could take ``name``: it follows the username rules, and no account
    has it in any case or a name that looks like it (the same look-alike skeleton)."""
    try:
        UsernameValidator()(name)
    except ValidationError:
        return False
    return not User.objects.filter(Q(username__iexact=name) | Q(username_skeleton=username_skeleton(name))).exists()


def _stem(name: str) -> str:
    """``name`` made into something the username rules may take: NFKC, each run of other
    characters (spaces, dots, invisible ones) one "_", no "_" or "-" in front, and one script
    (else only its Latin letters and digits are kept)."""
    normal = username_normal(name)
    out: list[str] = []
    for ch in normal:
        kind = unicodedata.category(ch)
        keep = kind[0] == "L" or kind == "Nd" or ch in "_-" or (kind[0] == "M" and out and out[-1] != "_")
        if keep:
            out.append(ch)
        elif out and out[-1] != "_":
            out.append("_")
    stem = "".join(out).strip("_-")
    try:
        UsernameValidator()(stem.ljust(3, "0")[:USERNAME_MAX_LENGTH])
    except ValidationError:
        stem = "".join(ch for ch in stem if ch.isascii() and (ch.isalnum() or ch in "_-")).strip("_-")
    return stem


def username_propose(name: str) -> str:
    """A free username for someone called ``name`` at a provider: ``name`` as the rules take
    it, else with a number after it (``ash2``, ``ash3``, …), else ``player`` and a number."""
    stem = (_stem(name) or FALLBACK_NAME)[:USERNAME_MAX_LENGTH]
    if username_free(stem):  # too short a stem ("jo") is not free: it gets a number ("jo2")
        return stem
    for number in range(2, 100):
        suffix = str(number)
        candidate = stem[: USERNAME_MAX_LENGTH - len(suffix)] + suffix
        if username_free(candidate):
            return candidate
    while True:  # a hundred accounts of one name: a random tail
        suffix = secrets.token_hex(3)
        candidate = f"{stem[: USERNAME_MAX_LENGTH - len(suffix) - 1]}-{suffix}"
        if username_free(candidate):
            return candidate
