"""Which notifications a player wants by mail, and the signed links that turn them off.

A player has one mode per kind (off, at once, daily digest). Without a stored choice the
default of ``DEFAULT_EMAIL_MODES`` holds, so only what a player changed is a row.

An unsubscribe link carries a signed token naming the user and what to turn off: one
kind, ``all`` kinds, or every kind that comes in the ``digest``. It needs no login (the
mail is the proof) and does not expire: RFC 8058 expects the link in an old mail to work.
A token from another salt (a password-reset or verification link) does not pass here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.core import signing
from django.db import transaction

from notifications.models import DEFAULT_EMAIL_MODES, EmailMode, EmailPreference, Kind

UNSUBSCRIBE_SALT = "notifications.unsubscribe"
ALL = "all"
DIGEST = "digest"

BAD_TOKEN = "This unsubscribe link is broken: part of it is missing or was changed."
NO_ACCOUNT = "This unsubscribe link is for an account that no longer exists."

# One line per kind for the settings page: when it happens and who gets it.
KIND_HELP: dict[str, str] = {
    Kind.PAIRED: "The queue found you an opponent while you were searching.",
    Kind.RESULT_AWAITING: "An opponent reported a result; you confirm or dispute it before it confirms itself.",
    Kind.CONFIRM_REMINDER: "About two hours before a result you have not answered confirms itself.",
    Kind.RATED: "A match of yours was confirmed and rated, with your rating change.",
    Kind.DISPUTED: "A result of yours was disputed (moderators: a result in a ladder you moderate).",
    Kind.DECISION: "A moderator voided or corrected a match of yours or adjusted your rating (and why), or "
    "lifted your suspension.",
    Kind.SEARCH_EXPIRED: "Your search ended because nobody was found in time.",
    Kind.WEBHOOK_PAUSED: "Moderators: a ladder's webhook failed 10 times in a row and was paused.",
    Kind.MATCH_CANCELLED: "A match the queue paired was cancelled: a missed ready check, an agreement, or no result "
    "within the play window.",
    Kind.CANCEL_REQUESTED: "Your opponent asks to cancel a paired match; it is cancelled if you agree.",
    Kind.NO_SHOW_CLAIMED: "Your opponent says you did not play; you answer before the deadline or forfeit.",
    Kind.FORFEIT: "A match of yours ended by forfeit after a no-show claim.",
    Kind.COMMENTED: "Someone commented on a match of yours (moderators: on a disputed or claimed match).",
    Kind.SUSPENDED: "A moderator suspended you from a ladder, with the reason and until when.",
    Kind.PARTY_INVITED: "Someone invited you to search with them as a party; you accept on the ladder's page.",
    Kind.SEASON_ENDED: "A season of a ladder you were ranked in ended: your final rank and any badge you earned.",
    Kind.TOURNAMENT: "A tournament you entered: your entry confirmed, your pairing each round (with the opponent "
    "and the deadline), a withdrawal, the final standings.",
    Kind.FAIR_PLAY: "The fair-play watch saw several quick losses or quick wins over the same opponent in your last "
    "games: a warning before the moderators are told.",
    Kind.REPORT_OUTCOME: "A moderator decided on a player you reported: whether they acted, without the details.",
}


# Kinds only moderators are sent: the settings page shows them to staff only.
MODERATOR_KINDS = frozenset({Kind.WEBHOOK_PAUSED})


def kinds_for(*, is_staff: bool) -> list[Kind]:
    """The kinds a user may be sent, in the order of ``Kind``."""
    return [kind for kind in Kind if is_staff or kind not in MODERATOR_KINDS]


def stored_modes(user_ids: Iterable[int]) -> dict[int, dict[str, str]]:
    """The modes each user chose (kind → mode); kinds they never changed are absent."""
    ids = list(dict.fromkeys(user_ids))
    chosen: dict[int, dict[str, str]] = {user_id: {} for user_id in ids}
    for user_id, kind, mode in EmailPreference.objects.filter(user_id__in=ids).values_list("user_id", "kind", "mode"):
        chosen[user_id][kind] = mode
    return chosen


def modes_for(user_ids: Iterable[int]) -> dict[int, dict[str, str]]:
    """Each user's mode for every kind: their stored choices over the defaults."""
    return {user_id: {**DEFAULT_EMAIL_MODES, **chosen} for user_id, chosen in stored_modes(user_ids).items()}


def preferences_set(*, user_id: int, modes: Mapping[str, str]) -> None:
    """Store ``modes`` (kind → mode) for the user; kinds left out keep what they had."""
    with transaction.atomic():
        for kind, mode in modes.items():
            EmailPreference.objects.update_or_create(user_id=user_id, kind=kind, defaults={"mode": mode})


def unsubscribe_token(user_id: int, scope: str) -> str:
    """The signed token of a link that turns off ``scope`` (a kind, ``all`` or ``digest``)."""
    return signing.Signer(salt=UNSUBSCRIBE_SALT).sign_object([user_id, scope])


def unsubscribe_read(token: str) -> tuple[int, str]:
    """``(user_id, scope)`` from a token; ``signing.BadSignature`` when it is not one of ours."""
    value = signing.Signer(salt=UNSUBSCRIBE_SALT).unsign_object(token)
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], int)):
        raise signing.BadSignature(BAD_TOKEN)
    user_id, scope = value
    if scope not in (ALL, DIGEST, *Kind.values):
        raise signing.BadSignature(BAD_TOKEN)
    return user_id, scope


def scope_label(scope: str) -> str:
    """What a scope turns off, in the words of the unsubscribe page."""
    if scope == ALL:
        return "notification mails"
    if scope == DIGEST:
        return "daily digests"
    return f"mails about “{Kind(scope).label}”"


def unsubscribe(*, user_id: int, scope: str) -> list[str]:
    """Turn off the mails of ``scope`` for the user; returns the kinds now off. Safe to repeat."""
    current = modes_for([user_id])[user_id]
    if scope == ALL:
        kinds = list(Kind.values)
    elif scope == DIGEST:
        kinds = [kind for kind, mode in current.items() if mode == EmailMode.DIGEST]
    else:
        kinds = [scope]
    preferences_set(user_id=user_id, modes=dict.fromkeys(kinds, EmailMode.OFF))
    return kinds
