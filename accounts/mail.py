"""The mails of accounts (a password reset, an address check) and how often they may be asked for.

Both go out through ``core.mail``: rendered here, sent by a Celery task after the commit.
A password reset is the one mail sent to an address nobody verified: it is how someone
who lost their password gets back in, and it only ever goes to the address the account
holds.

Limits are counted in the cache per window (``core.cache.count_in_window``), atomically
across processes; with the cache down they let everything through, as the sign-up limit does.
"""

from __future__ import annotations

import hashlib
import unicodedata

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.core.cache import caches
from django.db import transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.models import User
from accounts.throttling import client_address, wait_words
from accounts.verification import VERIFY_LINK_DAYS, verification_path
from core.cache import count_in_window
from core.mail import absolute_url, send_templated_mail

PASSWORD_RESET_TEMPLATE = "mail/password_reset"
VERIFY_TEMPLATE = "mail/verify_email"
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def verification_link_due(*, user: User) -> bool:
    """Whether ``user``'s address needs a link: it has one, and it is not verified yet."""
    return bool(user.email) and not user.has_verified_email


def verification_mail_send(*, user: User) -> bool:
    """Mail ``user`` a link that verifies their address, unless it has none or is verified already."""
    if not verification_link_due(user=user):
        return False
    context = {"user": user, "verify_url": absolute_url(verification_path(user=user)), "days": VERIFY_LINK_DAYS}
    send_templated_mail(to=[user.email], template=VERIFY_TEMPLATE, context=context)
    return True


def password_reset_mail_send(*, user: User, uidb64: str, token: str) -> None:
    """Mail ``user`` the link that sets a new password (Django's token, good for PASSWORD_RESET_TIMEOUT)."""
    path = reverse("accounts:password_reset_confirm", kwargs={"uidb64": uidb64, "token": token})
    valid_for = wait_words(settings.PASSWORD_RESET_TIMEOUT)  # "3 days"
    context = {"user": user, "reset_url": absolute_url(path), "valid_for": valid_for}
    send_templated_mail(to=[user.email], template=PASSWORD_RESET_TEMPLATE, context=context)


def password_reset_accounts(*, email: str) -> list[User]:
    """The accounts a reset for ``email`` goes to: the one that verified it, else every holder.

    Only active accounts whose address is ``email`` in any case, with a password or not:
    Django's own reset skips accounts without one, but here such an account was made by
    signing in with Discord or Lichess, and this link is how it sets its first password (a
    deleted account has no address). A verified address belongs to one account, so the link
    goes to that one only. An address nobody verified may sit on several accounts
    (typing it proves nothing); then each gets its own link, and the first one used
    verifies the address for its account, after which only that account gets resets for it.
    """
    folded = unicodedata.normalize("NFKC", email).casefold()
    holders = [
        account
        for account in User.objects.filter(email__iexact=email, is_active=True).order_by("pk")
        if unicodedata.normalize("NFKC", account.email).casefold() == folded
    ]
    verified = [account for account in holders if account.has_verified_email]
    return verified or holders


def password_reset_mails_send(*, email: str) -> int:
    """Mail a reset link to each account ``password_reset_accounts`` finds; returns how many."""
    accounts = password_reset_accounts(email=email)
    for account in accounts:
        uidb64 = urlsafe_base64_encode(force_bytes(account.pk))
        password_reset_mail_send(user=account, uidb64=uidb64, token=default_token_generator.make_token(account))
    return len(accounts)


def password_reset_enqueue(*, email: str) -> None:
    """Look the address up and mail its accounts in a Celery task, not here.

    The request then does the same work whether an account has the address or not, so
    neither its answer nor its timing tells an asker which addresses have accounts.
    """
    from accounts.tasks import send_password_reset_task  # the task calls this module's service

    # Not robust: every address is queued alike, so with the broker down every asker gets
    # the 503 page (core.middleware) and may try again; it tells nothing about the address.
    transaction.on_commit(lambda: send_password_reset_task.delay(email))


def password_reset_allowed(*, request: HttpRequest, email: str) -> bool:
    """Count one reset asked for ``email`` from the request's client; ``False`` past either limit.

    The client is counted first, and a client past its limit does not count against the
    address: whoever floods the form from one place cannot use up someone else's resets.
    Addresses are counted whatever their case, under a digest, not in the clear.
    """
    client = f"password-reset:client:{client_address(request)}"
    if _over(client, settings.PASSWORD_RESET_CLIENT_RATE):
        return False
    digest = hashlib.sha256(email.strip().casefold().encode()).hexdigest()[:32]
    return not _over(f"password-reset:address:{digest}", settings.PASSWORD_RESET_RATE)


def verification_link_wait(*, user: User) -> int:
    """Count one verification link for ``user``: 0 if it may be sent, else seconds to wait.

    One count per account covers "Send the link again" and a change of address alike (both
    mail a link to an address the account chose), so changing the address over and over
    cannot mail more links than asking again would.
    """
    return _over(f"verify-link:{user.pk}", settings.EMAIL_VERIFY_RESEND_RATE)


def _over(key: str, rate: str | None) -> int:
    """Count one event under ``key``: seconds left in the window once past ``rate``, else 0."""
    if not rate:
        return 0
    number, period = rate.split("/")
    counted = count_in_window(caches["default"], key, _PERIODS[period[0]])
    if counted is None:
        return 0  # the cache cannot count (Redis is down): let it through
    count, seconds_left = counted
    return seconds_left if count > int(number) else 0
