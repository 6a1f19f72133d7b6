"""Username rules, with messages that say exactly what is wrong."""

from __future__ import annotations

import functools
import json
import unicodedata
from importlib.resources import files

from confusable_homoglyphs import categories  # type: ignore[import-untyped]
from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible

USERNAME_MIN_LENGTH = 3
USERNAME_MAX_LENGTH = 30

USERNAME_TOO_SHORT = "Usernames need at least %(min)d characters; “%(value)s” has %(length)d."
USERNAME_TOO_LONG = "Usernames can have at most %(limit_value)d characters; this one has %(show_value)d."
USERNAME_BAD_CHARACTERS = "Usernames may use letters of any script, digits, “_” and “-”; %(bad)s not allowed."
USERNAME_BAD_START = "Usernames must start with a letter or a digit."
USERNAME_MIXED_SCRIPTS = (
    "Usernames keep to one script (Japanese, Chinese and Korean may mix theirs, and any may add "
    "Latin letters); “%(value)s” mixes %(scripts)s."
)
USERNAME_LOOKS_LIKE = (
    "“%(value)s” could be mistaken for the existing username “%(other)s” (some letters look alike); "
    "choose one that cannot."
)
USERNAME_TAKEN_ANY_CASE = "That username is already taken (usernames are not case-sensitive)."
USERNAME_TAKEN = "The username “%(value)s” is already taken (usernames are not case-sensitive)."
EMAIL_VERIFIED_ELSEWHERE = (
    "Another account has confirmed this address as its own, so it cannot be used for this one. "
    "Use another address, or leave the field empty."
)


# Scripts a name may mix (Unicode's "highly restrictive" profile, UTS #39 §5.2): Japanese
# writes Han with Hiragana and Katakana, Chinese Han with Bopomofo, Korean Han with Hangul;
# each may add Latin. Any other name keeps to one script. Digits, "_" and "-" are common to
# all, and a combining mark takes the script of the letter it follows.
_SCRIPT_SETS = (
    frozenset({"HAN", "HIRAGANA", "KATAKANA", "LATIN"}),
    frozenset({"HAN", "BOPOMOFO", "LATIN"}),
    frozenset({"HAN", "HANGUL", "LATIN"}),
)
_SHARED_SCRIPTS = frozenset({"COMMON", "INHERITED"})


def username_normal(value: str) -> str:
    """The name as stored: NFKC, so a full-width "ａｓｈ" or a ligature is its plain form."""
    return unicodedata.normalize("NFKC", value)


def _shown(ch: str) -> str:
    """A character as an error message names it: itself, or its Unicode name if it is invisible."""
    if ch == " ":
        return "“space”"
    kind = unicodedata.category(ch)
    if kind[0] in "LN" or kind in ("Pc", "Pd", "Po", "Ps", "Pe", "Pi", "Pf", "Sm", "So", "Sc", "Sk"):
        return f"“{ch}”"
    name = unicodedata.name(ch, "").lower() or "unnamed character"
    if kind[0] == "M":  # a mark with no letter before it: shown by name, it would sit on the quotes
        return f"the {name} (U+{ord(ch):04X}) without a letter before it"
    return f"the invisible {name} (U+{ord(ch):04X})"


def _allowed(ch: str, previous: str) -> bool:
    kind = unicodedata.category(ch)
    if kind[0] == "L" or kind == "Nd" or ch in "_-":
        return True
    # A combining mark (an accent, a vowel sign of an Indic script) after a letter or another mark.
    return kind[0] == "M" and bool(previous) and unicodedata.category(previous)[0] in "LM"


def username_scripts(value: str) -> frozenset[str]:
    """The scripts of ``value``'s letters (digits, "_", "-" and combining marks belong to none)."""
    return frozenset(categories.alias(ch) for ch in value) - _SHARED_SCRIPTS


@deconstructible
class UsernameValidator:
    """Length 3–30; letters of any script, digits, ``_`` and ``-``; starting with a letter or
    a digit; one script, or one of the mixes a language writes (``_SCRIPT_SETS``).

    What else would let one player pass for another is refused too: invisible characters
    (a zero-width joiner, a direction mark) are not letters, and a name whose look-alike
    skeleton (``username_skeleton``) matches an existing account's is refused where names
    are chosen (``User.clean``). The value is checked as stored: NFKC-normalised.
    """

    def __call__(self, value: str) -> None:
        value = username_normal(value)
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
        bad = sorted({ch for index, ch in enumerate(value) if not _allowed(ch, value[index - 1] if index else "")})
        if bad:
            shown = ", ".join(_shown(ch) for ch in bad)
            verb = "is" if len(bad) == 1 else "are"
            raise ValidationError(
                USERNAME_BAD_CHARACTERS, code="username_bad_characters", params={"bad": f"{shown} {verb}"}
            )
        if value[0] in "_-":
            raise ValidationError(USERNAME_BAD_START, code="username_bad_start")
        scripts = username_scripts(value)
        if len(scripts) > 1 and not any(scripts <= allowed for allowed in _SCRIPT_SETS):
            names = sorted(script.title() for script in scripts)
            raise ValidationError(
                USERNAME_MIXED_SCRIPTS,
                code="username_mixed_scripts",
                params={"value": value, "scripts": ", ".join(names[:-1]) + " and " + names[-1]},
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UsernameValidator)


@functools.cache
def _look_alike_classes() -> dict[str, str]:
    """Each character that looks like another, mapped to one member of its class of look-alikes.

    The classes join every pair of single characters that Unicode's confusables list
    (confusable-homoglyphs' copy of ``confusables.txt``) says may be mistaken for each other:
    Cyrillic "а" and Latin "a", "1" and "l", "0" and "O". The member kept is the smallest.
    """
    data = json.loads(files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8"))
    parent: dict[str, str] = {}

    def root(ch: str) -> str:
        while parent.get(ch, ch) != ch:
            parent[ch] = parent.get(parent[ch], parent[ch])
            ch = parent[ch]
        return ch

    for ch, alikes in data.items():
        for alike in alikes:
            other = alike["c"].replace("\u200e", "")  # the data wraps right-to-left letters in marks
            if len(ch) == 1 and len(other) == 1:
                a, b = root(ch), root(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return {ch: root(ch) for ch in parent}


def username_skeleton(value: str) -> str:
    """What ``value`` looks like, whatever its case and look-alike letters: two names with the
    same skeleton could be mistaken for each other ("pаypal" with a Cyrillic "а", "PayPal" and
    "paypal"). NFKC, case-folded, decomposed, each character replaced by its class of look-alikes
    (after Unicode's skeleton, UTS #39 §4)."""
    classes = _look_alike_classes()
    folded = unicodedata.normalize("NFD", username_normal(value).casefold())
    return "".join(classes.get(ch, ch) for ch in folded)
