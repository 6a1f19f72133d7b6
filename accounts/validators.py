"""Username rules, with messages that say exactly what is wrong."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible

USERNAME_MIN_LENGTH = 3
USERNAME_MAX_LENGTH = 30
_ALLOWED = re.compile(r"[A-Za-z0-9_-]")

USERNAME_TOO_SHORT = "Usernames need at least %(min)d characters; “%(value)s” has %(length)d."
USERNAME_TOO_LONG = "Usernames can have at most %(limit_value)d characters; this one has %(show_value)d."
USERNAME_BAD_CHARACTERS = "Usernames may use only letters A–Z, digits, “_” and “-”; %(bad)s not allowed."
USERNAME_BAD_START = "Usernames must start with a letter or a digit."
USERNAME_TAKEN_ANY_CASE = "That username is already taken (usernames are not case-sensitive)."
USERNAME_TAKEN = "The username “%(value)s” is already taken (usernames are not case-sensitive)."
EMAIL_VERIFIED_ELSEWHERE = (
    "Another account has confirmed this address as its own, so it cannot be used for this one. "
    "Use another address, or leave the field empty."
)


@deconstructible
class UsernameValidator:
    """Length 3–30, ASCII letters, digits, ``_`` and ``-``, starting with a letter or digit.

    ASCII only on purpose: look-alike letters from other scripts would let one player
    impersonate another on a leaderboard.
    """

    def __call__(self, value: str) -> None:
        length = len(value)
        if length < USERNAME_MIN_LENGTH:
            raise ValidationError(
                USERNAME_TOO_SHORT,
                code="username_too_short",
                params={"min": USERNAME_MIN_LENGTH, "value": value, "length": length},
            )
        if length > USERNAME_MAX_LENGTH:
            raise ValidationError(
                USERNAME_TOO_LONG,
                code="max_length",
                params={"limit_value": USERNAME_MAX_LENGTH, "show_value": length},
            )
        bad = sorted({ch for ch in value if not _ALLOWED.fullmatch(ch)})
        if bad:
            shown = ", ".join("“space”" if ch == " " else f"“{ch}”" for ch in bad)
            verb = "is" if len(bad) == 1 else "are"
            raise ValidationError(
                USERNAME_BAD_CHARACTERS, code="username_bad_characters", params={"bad": f"{shown} {verb}"}
            )
        if value[0] in "_-":
            raise ValidationError(USERNAME_BAD_START, code="username_bad_start")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UsernameValidator)
