"""Who may do what to a ladder's matches: moderators, trusted reporters and the players.

- A **moderator** (``accounts.roles.is_moderator``) holds ``ladder.change_match`` (the "moderators" group gives it, with
  staff status for the admin). Moderators look after every ladder: they report anyone's
  game, confirm, void or correct any match, and read every replay job. The admin's match
  actions ask for the same permission ("change" on matches).
- A **trusted reporter** is a game server or a bot whose results are confirmed at once:
  it holds ``ladder.trusted_reporter`` (every ladder) or is on one ladder's
  ``trusted_reporters`` list. Moderators are trusted too.
- A **player** of a pending match whose side has not answered yet confirms or disputes
  it. The reporter's side answered by reporting.

An inactive account is none of these. The services and the views ask these functions; the
services keep the messages a refusal shows.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser

from accounts.models import User
from accounts.roles import is_moderator
from ladder.models import Ladder, Match, MatchSide, MatchStatus, SideAnswer

TRUSTED_EVERYWHERE = "ladder.trusted_reporter"

# Why a player may not confirm or dispute a match, as the services' error codes.
NOT_PENDING = "not_pending"
NOT_PARTICIPANT = "not_participant"
OWN_REPORT = "own_report"
ALREADY_ANSWERED = "already_answered"


def is_trusted_everywhere(user: User | AnonymousUser) -> bool:
    """Holds the global trusted-reporter permission (not a moderator by itself)."""
    return bool(user.is_active and user.has_perm(TRUSTED_EVERYWHERE))


def is_trusted_reporter(user: User | AnonymousUser, ladder: Ladder) -> bool:
    """Game servers and bots: confirmed at once (global permission or the ladder's list)."""
    if not user.is_active:
        return False
    return user.has_perm(TRUSTED_EVERYWHERE) or ladder.trusted_reporters.filter(pk=user.pk).exists()


def may_report_for_others(user: User | AnonymousUser, ladder: Ladder) -> bool:
    """Reports games they did not play in, confirmed at once: moderators and the ladder's trusted reporters."""
    return is_moderator(user) or is_trusted_reporter(user, ladder)


def answer_refusal(match: Match, side: MatchSide | None) -> str | None:
    """Why the players of ``side`` (``None``: the user played in no side) may not confirm or
    dispute ``match`` now, as an error code; ``None`` when they may."""
    if match.status != MatchStatus.PENDING:
        return NOT_PENDING
    if side is None:
        return NOT_PARTICIPANT
    if side.answer == SideAnswer.REPORTED:
        return OWN_REPORT
    if side.answer:
        return ALREADY_ANSWERED
    return None


def may_answer(match: Match, side: MatchSide | None) -> bool:
    """The players of ``side`` may confirm or dispute ``match`` now."""
    return answer_refusal(match, side) is None
