"""Verifying an email address with a signed link, so that mail goes only where its owner reads.

The link carries the account's id and the address it was sent to, signed with the site's
secret (``django.core.signing``, a salt of its own) and dated: it is good for
``VERIFY_LINK_DAYS`` days. Following it records the address in ``User.email_verified``.
A link for an address the account no longer uses is refused, so a link for an old
address can never verify a new one. No login is needed: the link itself is the proof.

A verified address belongs to one account (a unique constraint on it): a link for an
address another account has verified meanwhile is refused.
"""

from __future__ import annotations

from datetime import timedelta

from django.core import signing
from django.db import IntegrityError, transaction
from django.urls import reverse

from accounts.models import User

SALT = "accounts.email-verification"
VERIFY_LINK_DAYS = 3

LINK_EXPIRED = (
    f"This link is more than {VERIFY_LINK_DAYS} days old. "
    "Ask for a new one with “Send the link again” in your account settings."
)
LINK_INVALID = "This link is not valid: it may have been cut short. Copy the whole link from the mail and try again."
LINK_OLD_ADDRESS = (
    "This link was sent to an address your account no longer uses. "
    "Follow the link in the newest mail, or ask for a new one in your account settings."
)

LINK_ADDRESS_TAKEN = (
    "Another account has confirmed this address as its own meanwhile, so it cannot be confirmed for yours. "
    "Use another address in your account settings."
)


class VerificationError(Exception):
    """A link that verifies nothing; ``str()`` says why, in words for the person who followed it."""


def verification_token(*, user: User) -> str:
    """The signed, dated token of a link that verifies ``user.email`` for ``user``."""
    return signing.dumps({"u": user.pk, "e": user.email}, salt=SALT, compress=True)


def verification_path(*, user: User) -> str:
    return reverse("accounts:verify_email", kwargs={"token": verification_token(user=user)})


def email_verify(*, token: str) -> User:
    """Mark the address a link was sent to as verified; ``VerificationError`` when it cannot be.

    Following a link twice is harmless: the address is verified already.
    """
    try:
        payload = signing.loads(token, salt=SALT, max_age=timedelta(days=VERIFY_LINK_DAYS))
    except signing.SignatureExpired:
        raise VerificationError(LINK_EXPIRED) from None
    except signing.BadSignature:
        raise VerificationError(LINK_INVALID) from None
    if not isinstance(payload, dict) or not isinstance(payload.get("u"), int) or not isinstance(payload.get("e"), str):
        raise VerificationError(LINK_INVALID)  # signed by us, so only a bug elsewhere could get here
    user = User.objects.filter(pk=payload["u"], is_active=True).first()
    if user is None:
        raise VerificationError(LINK_INVALID)
    if not payload["e"] or payload["e"].casefold() != user.email.casefold():
        raise VerificationError(LINK_OLD_ADDRESS)
    if not user.has_verified_email:
        if User.objects.with_verified_address(user.email).exclude(pk=user.pk).exists():
            raise VerificationError(LINK_ADDRESS_TAKEN)
        if not address_verify(user=user):
            raise VerificationError(LINK_OLD_ADDRESS)  # changed between the read and the write
    return user


def address_verify(*, user: User) -> bool:
    """Record ``user.email`` as verified; ``False`` if the account's address is another by now,
    or another account verified it first (the unique constraint, when two race)."""
    try:
        # Only this field: a save of the whole row could undo a change made meanwhile.
        with transaction.atomic():
            updated = User.objects.filter(pk=user.pk, email=user.email).update(email_verified=user.email)
    except IntegrityError:
        return False
    if updated:
        user.email_verified = user.email
    return bool(updated)
