"""The checks every way of writing a match's result shares: the refusals, with their messages.

A report (``ladder.matches.reporting``), its PostgreSQL twin (``ladder.matches.answers``), a
series' game and a moderator's decision (``ladder.matches.decisions``) refuse the same
things in the same words: each check raises one ``ValidationError`` whose code names it,
before anything is written. ``locked`` reads a match with its row locked, as every
service that changes one does first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError

from accounts.models import User
from ladder import permissions
from ladder.matches import states
from ladder.matches.sql import LockedMember
from ladder.models import MAX_PLAYERS_PER_MATCH, Ladder, Match, MatchFormat, MatchSide, MatchStatus
from ratings.models import PlayerRating

TOO_FEW_SIDES = "A match needs at least two sides."
EMPTY_SIDE = "Side %(side)d has no players."
TOO_MANY_PLAYERS = "A game in %(ladder)s has at most %(most)d players; this one has %(count)d."
PLAYER_TWICE = "%(player)s is on more than one side."
NOT_A_MEMBER = "%(player)s is not a member of %(ladder)s."
ACCOUNT_INACTIVE = "%(player)s's account is deactivated."
REPORTER_NOT_IN_MATCH = "You can only report matches you played in."
BAD_PLACEMENT = "Side %(side)d needs a placement of 1 or more."
PLACEMENTS_PER_SIDE = "Give one placement per side (%(sides)d)."
DRAWS_NOT_ALLOWED = "%(ladder)s does not allow draws: two sides cannot share a placement."
FORMAT_NOT_ALLOWED = "%(ladder)s does not allow %(format)s games."
PLAYED_BEFORE_JOINING = "%(player)s joined %(ladder)s after the played-at time."
ALREADY_REPORTED = "This match already has a result, or was cancelled."
NOT_READY_YET = "Both players must press Ready before the result can be reported."
SERIES_GAMES = "This match is a best-of-%(games)d series: report each game as it ends."
NOT_PENDING = "This match is %(status)s, not awaiting confirmation."
NOT_A_PARTICIPANT = "Only players of this match can answer it."
OWN_REPORT = "You reported this result; the other side confirms it."
ALREADY_ANSWERED = "Your side has already answered."


@dataclass(frozen=True, slots=True)
class SideInput:
    """One side of a reported match: its players and its placement (1 is best)."""

    players: Sequence[User]
    placement: int


def match_format(sizes: Sequence[int]) -> MatchFormat:
    if len(sizes) > 2:
        return MatchFormat.FREE_FOR_ALL
    if sizes[0] == sizes[1] == 1:
        return MatchFormat.ONE_VS_ONE
    return MatchFormat.TEAMS if sizes[0] == sizes[1] else MatchFormat.UNEVEN_TEAMS


def format_allowed(ladder: Ladder, kind: MatchFormat) -> bool:
    return {
        MatchFormat.ONE_VS_ONE: ladder.allow_one_vs_one,
        MatchFormat.TEAMS: ladder.allow_teams,
        MatchFormat.UNEVEN_TEAMS: ladder.allow_uneven_teams,
        MatchFormat.FREE_FOR_ALL: ladder.allow_free_for_all,
    }[kind]


def check_sides(ladder: Ladder, sides: Sequence[SideInput]) -> None:
    if len(sides) < 2:
        raise ValidationError(TOO_FEW_SIDES, code="too_few_sides")
    seen: set[int] = set()
    count = 0
    for number, side in enumerate(sides, start=1):
        if not side.players:
            raise ValidationError(EMPTY_SIDE, code="empty_side", params={"side": number})
        for player in side.players:
            if player.pk in seen:
                raise ValidationError(PLAYER_TWICE, code="player_twice", params={"player": player.username})
            seen.add(player.pk)
            count += 1
    most = min(ladder.max_players, MAX_PLAYERS_PER_MATCH)
    if count > most:
        raise ValidationError(
            TOO_MANY_PLAYERS, code="too_many_players", params={"ladder": ladder.name, "most": most, "count": count}
        )
    kind = match_format([len(side.players) for side in sides])
    if not format_allowed(ladder, kind):
        raise ValidationError(
            FORMAT_NOT_ALLOWED, code="format_not_allowed", params={"ladder": ladder.name, "format": kind.label}
        )
    check_placements(ladder, [side.placement for side in sides])


def check_placements(ladder: Ladder, placements: Sequence[int], *, sides: int | None = None) -> None:
    """One whole-number placement of at least 1 per side, and no shared place without draws."""
    if sides is not None and len(placements) != sides:
        raise ValidationError(PLACEMENTS_PER_SIDE, code="bad_placements", params={"sides": sides})
    for number, placement in enumerate(placements, start=1):
        if isinstance(placement, bool) or not isinstance(placement, int) or placement < 1:
            raise ValidationError(BAD_PLACEMENT, code="bad_placement", params={"side": number})
    if not ladder.allow_draws and len(set(placements)) < len(placements):
        raise ValidationError(DRAWS_NOT_ALLOWED, code="draws_not_allowed", params={"ladder": ladder.name})


def lock_members(ladder: Ladder, players: Sequence[User], played_at: datetime | None = None) -> dict[int, PlayerRating]:
    """Lock the players' ratings (pk order) and check each is an active member (``check_members``)."""
    rows = {
        row.player_id: row
        for row in PlayerRating.objects.select_for_update()
        .filter(ladder=ladder, player__in=[p.pk for p in players])
        .order_by("pk")
    }
    check_members(ladder, players, rows, played_at)
    return rows


def check_members(
    ladder: Ladder,
    players: Sequence[User],
    rows: Mapping[int, PlayerRating | LockedMember],
    played_at: datetime | None = None,
) -> None:
    """Every player is an active account and member, and (with ``played_at``) joined before it."""
    for player in players:
        if not player.is_active:
            raise ValidationError(ACCOUNT_INACTIVE, code="account_inactive", params={"player": player.username})
        row = rows.get(player.pk)
        if row is None or not row.is_active:
            raise ValidationError(
                NOT_A_MEMBER, code="not_member", params={"player": player.username, "ladder": ladder.name}
            )
    if played_at is None:
        return
    for player in players:
        if rows[player.pk].joined_at > played_at:
            raise ValidationError(
                PLAYED_BEFORE_JOINING,
                code="played_before_joining",
                params={"player": player.username, "ladder": ladder.name},
            )


def locked(match: Match) -> Match:
    return Match.objects.select_for_update(of=("self",)).select_related("ladder").get(pk=match.pk)


def side_of(match: Match, user: User) -> MatchSide:
    participant = match.participants.filter(player=user).select_related("side").first()
    if participant is None:
        raise ValidationError(NOT_A_PARTICIPANT, code="not_participant")
    return participant.side


# The message of each refusal of ``permissions.answer_refusal``, the one rule of who may answer.
ANSWER_REFUSALS = {
    permissions.NOT_PENDING: NOT_PENDING,
    permissions.NOT_PARTICIPANT: NOT_A_PARTICIPANT,
    permissions.OWN_REPORT: OWN_REPORT,
    permissions.ALREADY_ANSWERED: ALREADY_ANSWERED,
}


def answerable(match: Match, user: User) -> MatchSide:
    """``user``'s side of ``match`` if it may confirm or dispute it now; else the refusal, as a ValidationError."""
    side = None
    if match.status == MatchStatus.PENDING:  # a finished match is refused without looking the user up
        participant = match.participants.filter(player=user).select_related("side").first()
        side = participant.side if participant is not None else None
    code = permissions.answer_refusal(match, side)
    if code is not None:
        params = {"status": match.get_status_display().lower()} if code == permissions.NOT_PENDING else None
        raise ValidationError(ANSWER_REFUSALS[code], code=code, params=params)
    assert side is not None  # answer_refusal refuses a user of no side
    return side


def check_result_reportable(match: Match, *, series: bool) -> None:
    """A paired match takes a result: not one game of a series, past its ready check, not answered yet."""
    if match.paired_by_queue and match.ladder.best_of > 1 and not series:
        raise ValidationError(SERIES_GAMES, code="series_games", params={"games": match.ladder.best_of})
    if match.status == MatchStatus.READY_CHECK:
        raise ValidationError(NOT_READY_YET, code="not_ready")
    if not states.REPORT_RESULT.allows(match.status):  # a result answers a no-show claim
        raise ValidationError(ALREADY_REPORTED, code="already_reported")
