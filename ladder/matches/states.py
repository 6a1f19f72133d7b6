"""A match's states and every transition between them: the one module that writes a match's status.

Each transition is a ``Transition`` in ``TRANSITIONS``: who makes it, from which states, to
which, the fields it writes and what it tells. Each has one function below that checks the
match is in one of its states, sets the status and the transition's fields on the match
and returns the fields to save; the service that calls it has checked everything else
(who asks, the deadline, the result) with its own messages, in its transaction, with the
match's row locked. A match in any other state raises ``IllegalTransition`` (a 400 naming
the state, never a 500), which no path the site offers reaches.

The hand-written statements of PostgreSQL write what these functions set on the match
(``ladder.matches.answers``), or filter and set with a transition's ``sources`` and
``target`` (``matchmaking.lifecycle``, ``matchmaking.sql_ready``), so both databases take
the same transitions. docs/architecture.md draws them ("A match's states"), and
tests/ladder/test_match_states.py holds the table and that drawing to this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError

from accounts.roles import is_moderator
from ladder.models import CancelReason, Confirmation, Ladder, Match, MatchStatus

if TYPE_CHECKING:
    from accounts.models import User

S = MatchStatus
# A match not saved yet: the transitions that create one start here.
NEW = "new"

ILLEGAL = "This match is %(status)s: it cannot be %(done)s."


@dataclass(frozen=True, slots=True)
class Transition:
    """One arrow of the state machine: ``sources`` → ``target``."""

    name: str
    sources: tuple[str, ...]
    target: MatchStatus
    who: str
    writes: tuple[str, ...]
    tells: str
    done: str  # what the refusal says cannot be done: "confirmed", "cancelled" ...

    def allows(self, status: str) -> bool:
        return status in self.sources

    @property
    def source_values(self) -> list[str]:
        """The saved states it leaves, for a statement's ``WHERE status IN (...)``."""
        return [str(status) for status in self.sources if status != NEW]


class IllegalTransition(ValidationError):
    """A transition asked of a match in a state it does not leave from."""

    def __init__(self, transition: Transition, status: str) -> None:
        label = "not saved yet" if status == NEW else S(status).label.lower()
        super().__init__(ILLEGAL, code="illegal_transition", params={"status": label, "done": transition.done})
        self.transition = transition


_OPEN = (S.READY_CHECK, S.SCHEDULED, S.CLAIMED)
_ANY_BUT_VOID = tuple(status for status in S if status != S.VOID)

PAIR_READY_CHECK = Transition(
    "pair_ready_check", (NEW,), S.READY_CHECK, "the queue, on a ladder with a ready check",
    ("status", "ready_deadline"), "the players that they are paired (matchmaking.forming)", "paired",
)  # fmt: skip
PAIR_SCHEDULED = Transition(
    "pair_scheduled", (NEW,), S.SCHEDULED, "the queue, on a ladder without a ready check",
    ("status", "play_deadline"), "the players that they are paired (matchmaking.forming)", "paired",
)  # fmt: skip
SERIES_GAME = Transition(
    "series_game", (NEW,), S.SCHEDULED, "a player or moderator reporting one game of a series",
    ("status",), "nobody: the game is reported at once (report_result)", "started",
)  # fmt: skip
ALL_READY = Transition(
    "all_ready", (S.READY_CHECK,), S.SCHEDULED, "the last player to press Ready",
    ("status", "play_deadline"), "nobody: every player has pressed Ready", "scheduled",
)  # fmt: skip
READY_MISSED = Transition(
    "ready_missed", (S.READY_CHECK,), S.CANCELLED, "the sweep or the next reader, past the ready deadline",
    ("status", "cancel_reason", "cancelled_at"), "the ready players are put back in the queue", "cancelled",
)  # fmt: skip
EXPIRED = Transition(
    "expired", (S.SCHEDULED,), S.CANCELLED, "the sweep or the next reader, past the play deadline",
    ("status", "cancel_reason", "cancelled_at"), "the players: match cancelled", "cancelled",
)  # fmt: skip
AGREED = Transition(
    "agreed", _OPEN, S.CANCELLED, "the last side to ask to cancel",
    ("status", "cancel_reason", "cancelled_at"), "the players: match cancelled", "cancelled",
)  # fmt: skip
CLAIM_NO_SHOW = Transition(
    "claim_no_show", (S.SCHEDULED,), S.CLAIMED, "a player of the match, saying the other side did not play",
    ("status", "claim_deadline"), "the other sides: a no-show claim to answer", "claimed",
)  # fmt: skip
FORFEIT_RATED = Transition(
    "forfeit_rated", (S.CLAIMED,), S.CONFIRMED,
    "the claimed side conceding, or the sweep past the claim deadline, where forfeits are rated",
    ("status", "confirmation", "confirmed_at"), "the players: the forfeit, and their new ratings", "forfeited",
)  # fmt: skip
FORFEIT_UNRATED = Transition(
    "forfeit_unrated", (S.CLAIMED,), S.CANCELLED,
    "the claimed side conceding, or the sweep past the claim deadline, where forfeits are not rated",
    ("status", "cancel_reason", "cancelled_at"), "the players: the forfeit", "forfeited",
)  # fmt: skip
CONTEST_CLAIM = Transition(
    "contest_claim", (S.CLAIMED,), S.DISPUTED, "the claimed side, saying it did play",
    ("status",), "the moderators: a dispute to decide", "disputed",
)  # fmt: skip
REPORT = Transition(
    "report", (NEW,), S.PENDING, "a player reporting a game they played",
    ("status", "reported_by", "reported_at"), "the other sides: a result to confirm", "reported",
)  # fmt: skip
REPORT_TRUSTED = Transition(
    "report_trusted", (NEW,), S.CONFIRMED, "a moderator or trusted reporter reporting a game",
    ("status", "reported_by", "reported_at", "confirmation", "confirmed_at"),
    "the players: their new ratings", "reported",
)  # fmt: skip
REPORT_RESULT = Transition(
    "report_result", (S.SCHEDULED, S.CLAIMED), S.PENDING,
    "a player of a paired match, a moderator or a trusted reporter (a result answers a no-show claim)",
    ("status", "reported_by", "reported_at"), "the other sides: a result to confirm", "reported",
)  # fmt: skip
CONFIRM = Transition(
    "confirm", (S.PENDING,), S.CONFIRMED, "the last side to confirm a result",
    ("status", "confirmation", "confirmed_at"), "the players: their new ratings", "confirmed",
)  # fmt: skip
CONFIRM_TRUSTED = Transition(
    "confirm_trusted", (S.PENDING,), S.CONFIRMED, "a moderator or trusted reporter's result of a paired match",
    ("status", "confirmation", "confirmed_at"), "the players: their new ratings", "confirmed",
)  # fmt: skip
CONFIRM_OVERDUE = Transition(
    "confirm_overdue", (S.PENDING,), S.CONFIRMED, "the sweep, once the ladder's confirmation window has passed",
    ("status", "confirmation", "confirmed_at"), "the players: their new ratings", "confirmed",
)  # fmt: skip
DISPUTE = Transition(
    "dispute", (S.PENDING,), S.DISPUTED, "a player of a side that has not answered",
    ("status",), "the moderators and the players: a dispute to decide", "disputed",
)  # fmt: skip
MODERATOR_CONFIRM = Transition(
    "moderator_confirm", (S.PENDING, S.DISPUTED), S.CONFIRMED, "a moderator, with a reason",
    ("status", "confirmation", "confirmed_at"), "the players: the decision and their new ratings", "confirmed",
)  # fmt: skip
CORRECT_UNRATED = Transition(
    "correct_unrated", tuple(s for s in _ANY_BUT_VOID if s != S.CONFIRMED), S.CONFIRMED,
    "a moderator correcting the result of a match not rated yet, with a reason",
    ("status", "confirmation", "confirmed_at"), "the players: the decision and their new ratings", "corrected",
)  # fmt: skip
VOID = Transition(
    "void", _ANY_BUT_VOID, S.VOID, "a moderator, with a reason",
    ("status", "voided_at", "voided_by"), "the players: the decision (a replay job re-rates the ladder)", "voided",
)  # fmt: skip
SERIES_DECIDED = Transition(
    "series_decided", (S.SCHEDULED, S.CLAIMED), S.CANCELLED,
    "the game that decides a series whose games are rated one by one",
    ("status", "cancel_reason", "cancelled_at", "claim_deadline", "reported_by", "reported_at"),
    "nobody more: each game told its players", "closed",
)  # fmt: skip

TRANSITIONS: tuple[Transition, ...] = (
    PAIR_READY_CHECK, PAIR_SCHEDULED, SERIES_GAME, ALL_READY, READY_MISSED, EXPIRED, AGREED, CLAIM_NO_SHOW,
    FORFEIT_RATED, FORFEIT_UNRATED, CONTEST_CLAIM, REPORT, REPORT_TRUSTED, REPORT_RESULT, CONFIRM,
    CONFIRM_TRUSTED, CONFIRM_OVERDUE, DISPUTE, MODERATOR_CONFIRM, CORRECT_UNRATED, VOID, SERIES_DECIDED,
)  # fmt: skip
# A cancellation's transition, by its reason.
CANCEL_BY_REASON = {
    CancelReason.READY_MISSED: READY_MISSED,
    CancelReason.EXPIRED: EXPIRED,
    CancelReason.AGREED: AGREED,
    CancelReason.FORFEIT: FORFEIT_UNRATED,
    CancelReason.SERIES: SERIES_DECIDED,
}


def status_of(match: Match) -> str:
    return NEW if match._state.adding else str(match.status)


def _move(match: Match, transition: Transition, **values: object) -> list[str]:
    status = status_of(match)
    if not transition.allows(status):
        raise IllegalTransition(transition, status)
    match.status = transition.target
    for name, value in values.items():
        setattr(match, name, value)
    return ["status", *values]


# -- Pairing and the ready check (matchmaking) ------------------------------------------------------


def pair(match: Match, ladder: Ladder, now: datetime) -> list[str]:
    """A new pairing (not saved yet): the ready check, or straight to play."""
    if ladder.ready_window_seconds:
        return _move(match, PAIR_READY_CHECK, ready_deadline=now + timedelta(seconds=ladder.ready_window_seconds))
    return _move(match, PAIR_SCHEDULED, play_deadline=now + timedelta(minutes=ladder.play_window_minutes))


def series_game(match: Match) -> list[str]:
    """A new match for one game of a series (not saved yet), reported at once."""
    return _move(match, SERIES_GAME)


def all_ready(match: Match, *, play_deadline: datetime) -> list[str]:
    """Every side is ready: the match is to be played by ``play_deadline``."""
    return _move(match, ALL_READY, play_deadline=play_deadline)


def cancel(match: Match, reason: CancelReason, now: datetime, **values: object) -> list[str]:
    """A paired match that will not be played (the transition follows the reason); never rated."""
    return _move(match, CANCEL_BY_REASON[reason], cancel_reason=reason, cancelled_at=now, **values)


def claim_no_show(match: Match, *, deadline: datetime) -> list[str]:
    """A side says the other did not play; the others answer by ``deadline``."""
    return _move(match, CLAIM_NO_SHOW, claim_deadline=deadline)


def contest_claim(match: Match) -> list[str]:
    """The claimed side says it played: the claim goes to the moderators as a dispute."""
    return _move(match, CONTEST_CLAIM)


# -- Reports and answers ----------------------------------------------------------------------------


def report(match: Match, *, reporter: User, now: datetime, trusted: bool) -> list[str]:
    """A new report (not saved yet): awaiting confirmation, or confirmed when a trusted account reports."""
    if trusted:
        how = Confirmation.MODERATOR if is_moderator(reporter) else Confirmation.TRUSTED
        return _move(match, REPORT_TRUSTED, reported_by=reporter, reported_at=now, confirmation=how, confirmed_at=now)
    return _move(match, REPORT, reported_by=reporter, reported_at=now)


def report_status(*, trusted: bool) -> MatchStatus:
    """The state a new report is written in, for the statement that inserts it."""
    return (REPORT_TRUSTED if trusted else REPORT).target


def report_result(match: Match, *, reporter: User, now: datetime) -> list[str]:
    """The result of a paired match: awaiting confirmation."""
    return _move(match, REPORT_RESULT, reported_by=reporter, reported_at=now)


def dispute(match: Match) -> list[str]:
    """A side disputes the result; a moderator decides."""
    return _move(match, DISPUTE)


# The transition of each way a match is confirmed.
CONFIRM_BY = {
    Confirmation.PARTICIPANT: CONFIRM,
    Confirmation.TRUSTED: CONFIRM_TRUSTED,
    Confirmation.AUTOMATIC: CONFIRM_OVERDUE,
    Confirmation.FORFEIT: FORFEIT_RATED,
}


def confirm(match: Match, how: Confirmation, now: datetime, *, transition: Transition | None = None) -> list[str]:
    """The result stands and is rated: by the players, a trusted account, the sweep or a forfeit.

    A moderator's confirmation is ``MODERATOR_CONFIRM``, a trusted report of a paired
    match ``CONFIRM_TRUSTED`` whether a moderator or a bot sent it, and a correction of an
    unrated match ``CORRECT_UNRATED``: ``transition`` names it.
    """
    chosen = transition or CONFIRM_BY[how]
    return _move(match, chosen, confirmation=how, confirmed_at=now)


def void(match: Match, *, moderator: User, now: datetime) -> list[str]:
    """A moderator voids the match: never rated, or taken out of the ratings by a replay."""
    return _move(match, VOID, voided_at=now, voided_by=moderator)


def transitions_from(status: str) -> Iterable[Transition]:
    return (transition for transition in TRANSITIONS if transition.allows(status))
