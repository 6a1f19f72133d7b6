"""A queue match's result on PostgreSQL: ``match_report_result`` and ``match_confirm`` in two statements each.

The twins of the ORM code in ``ladder.matches.reporting`` (which other databases run, and
the tests run on PostgreSQL too): the same checks in the same order, the same refusals,
rows, ratings, notifications and webhook events. ``ladder.matches.answers_sql.read_locked`` locks
and reads the match with everything the checks need; the service decides and rates in
Python (``ratings.services.rating_compute``); ``write_answer`` writes it all at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from accounts.roles import is_moderator
from ladder import permissions
from ladder.fields.answers import Answer, game_length, write_answers
from ladder.matches import checks, notices, states
from ladder.matches.answers_sql import LockedMatch, SideState, read_locked, write_answer
from ladder.models import Confirmation, Match, MatchSide, MatchStatus, SideAnswer
from ladder.moderation import watch
from ladder.moderation.suspensions import refuse_suspended_players
from ladder.permissions import is_trusted_everywhere
from notifications.services import forget_counts, mail_soon
from ratings import hooks
from ratings.history import change_values
from ratings.services import RatedMatch, rating_compute
from webhooks.services import subscribed_events


def _read(match: Match, user: User, now: datetime) -> LockedMatch:
    locked = read_locked(match.pk, user.pk, now)
    if locked is None:
        raise Match.DoesNotExist("Match matching query does not exist.")
    return locked


def _lineup(locked: LockedMatch) -> notices.Lineup:
    """``notices.lineup_of`` from the locked rows: the sides with players, by index."""
    sides = [side for side in locked.sides if side.players]
    return notices.Lineup([list(side.players) for side in sides], [side.placement for side in sides])


def report_result(
    *,
    match: Match,
    reporter: User,
    placements: Sequence[int],
    now: datetime,
    series: bool,
    answers: Sequence[Answer] = (),
) -> Match:
    """``matches.match_report_result`` on PostgreSQL."""
    with transaction.atomic():
        locked = _read(match, reporter, now)
        match, ladder = locked.match, locked.match.ladder
        checks.check_result_reportable(match, series=series)
        checks.check_placements(ladder, placements, sides=len(locked.sides))
        moderator = is_moderator(reporter)
        trusted = moderator or is_trusted_everywhere(reporter) or (reporter.is_active and locked.listed)
        mine = next((side for side in locked.sides if any(pk == reporter.pk for pk, _ in side.players)), None)
        if mine is None and not trusted:
            raise ValidationError(checks.REPORTER_NOT_IN_MATCH, code="reporter_not_in_match")
        players = [User(pk=p.id, username=p.username, is_active=p.is_active) for p in locked.players]
        if not trusted and locked.suspended:
            refuse_suspended_players(ladder=ladder, player_ids=[p.pk for p in players], reporter=reporter, now=now)
        checks.check_members(ladder, players, locked.members)
        for side, placement in zip(locked.sides, placements, strict=True):
            side.placement = placement
            if side is mine:
                side.answer, side.answered_by, side.answered_at = SideAnswer.REPORTED, reporter.pk, now
        states.report_result(match, reporter=reporter, now=now)  # written by ``_write``
        write_answers(match, answers)  # before the rating below
        if trusted:
            how = Confirmation.MODERATOR if moderator else Confirmation.TRUSTED
            _confirm(locked, how, now, transition=states.CONFIRM_TRUSTED)
            return match
        batch = notices.reported_batch(
            ladder=ladder,
            lineup=_lineup(locked),
            reporter=reporter.username,
            answered=[] if mine is None else [mine.index],
            now=now,
        )
        _write(locked, now, None, batch)
        sides = [([pk for pk, _ in side.players], side.placement or 0) for side in locked.sides if side.players]
        watch.hold_if_watched(
            ladder=ladder, match=match, sides=sides, length=game_length(answers), now=now, reads=locked.watched
        )
        return match


def confirm(*, match: Match, user: User, now: datetime) -> Match:
    """``matches.match_confirm`` on PostgreSQL."""
    with transaction.atomic():
        locked = _read(match, user, now)
        match = locked.match
        side = _answerable(locked, user)
        side.answer, side.answered_by, side.answered_at = SideAnswer.CONFIRMED, user.pk, now
        answered = [pk for pk, _ in side.players]  # their "To confirm" count fell
        if all(other.answer for other in locked.sides) and not match.held_for_moderator:
            _confirm(locked, Confirmation.PARTICIPANT, now, forget=answered)
        else:
            _write(locked, now, None, None, forget=answered)
        return match


def _answerable(locked: LockedMatch, user: User) -> SideState:
    """``user``'s side if it may confirm now; else ``permissions.answer_refusal``'s refusal."""
    match = locked.match
    side = None
    if match.status == MatchStatus.PENDING:
        side = next((side for side in locked.sides if any(pk == user.pk for pk, _ in side.players)), None)
    code = permissions.answer_refusal(match, None if side is None else MatchSide(answer=side.answer))
    if code is not None:
        params = {"status": match.get_status_display().lower()} if code == permissions.NOT_PENDING else None
        raise ValidationError(checks.ANSWER_REFUSALS[code], code=code, params=params)
    assert side is not None  # answer_refusal refuses a user of no side
    return side


def _confirm(
    locked: LockedMatch,
    how: Confirmation,
    now: datetime,
    *,
    forget: Sequence[int] = (),
    transition: states.Transition | None = None,
) -> None:
    """``matches._confirm``: confirm the match, rate it once, tell its players and the webhooks; then write.

    The webhooks' events are read once: none wanted (the usual case), neither the ranks
    before nor the events after are looked at.
    """
    match, ladder = locked.match, locked.match.ladder
    states.confirm(match, how, now, transition=transition)  # written by ``_write``
    hooked = bool(subscribed_events(ladder.pk))
    before = notices.watch_ranks(ladder, now) if hooked else None
    if match.rated_at is not None or not match.rated:  # rated already, or never (an unrated tournament's game)
        _write(locked, now, None, None, forget=forget)
        return
    rated = _rate(locked)
    match.rated_at = now
    changes = {}
    for row in rated.changes:
        values = change_values(row)
        changes[values["player_id"]] = (values["rating_after"] - values["rating_before"], values["rating_after"])
    lineup = _lineup(locked)
    _write(locked, now, rated, notices.rated_batch(ladder=ladder, lineup=lineup, changes=changes), forget=forget)
    if hooked:
        notices.emit_rated(match_id=match.pk, ladder=ladder, lineup=lineup, changes=changes, now=now, before=before)
    hooks.matches_rated(ladder.pk, [match.pk])


def _rate(locked: LockedMatch) -> RatedMatch:
    """``rating_apply_match``'s computation from the locked rows (``ratings.history.match_layout``'s layout)."""
    match = locked.match
    placements = [side.placement for side in locked.sides if side.placement is not None]
    if len(placements) < len(locked.sides):
        raise ValueError(f"match {match.pk} has a side without a placement: it cannot be rated")
    return rating_compute(
        ladder=match.ladder,
        layout=[[pk for pk, _ in side.players] for side in locked.sides],
        placements=placements,
        played_at=match.played_at,
        standings={player: member.standing for player, member in locked.members.items()},
    )


def _write(
    locked: LockedMatch,
    now: datetime,
    rated: RatedMatch | None,
    batch: notices.Batch | None,
    *,
    forget: Sequence[int] = (),
) -> None:
    """Write the answer; then, as ``notify`` would, forget the recipients' counts (and those of
    ``forget``, in the same cache call) and mail the verified ones."""
    mailable = {p.id for p in locked.players if p.mailable}
    write_answer(locked, now=now, rated=rated, notices=batch, mailable=mailable, read_for=forget)
    recipients = set(batch.data) if batch is not None else set()
    forget_counts(recipients.union(forget))
    if mailable & recipients:
        mail_soon()
