"""Signals accounts sends for other apps to act on, without accounts importing them."""

from __future__ import annotations

from django.db import models
from django.dispatch import Signal


class PasswordSetBy(models.TextChoices):
    """How an account's password was set: by its owner knowing the old one, or from a reset link."""

    CHANGE = "change", "changed"
    RESET = "reset", "reset"


# Sent with ``user`` and ``how`` (a ``PasswordSetBy``) once the owner of an account sets a new
# password, inside the transaction that saves it. A new password is how an owner takes an
# account back, so whatever else acts for the account (the API's tokens) must end with it.
password_set = Signal()

# Sent with ``user`` and ``now`` when an account is deleted (``accounts.deletion``), inside its
# transaction and before its name and address are removed: each app deletes what it keeps for
# the account (API tokens, notifications, searches), while matches and ratings stay.
account_deleted = Signal()
