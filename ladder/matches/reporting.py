"""Reporting, confirming and disputing matches (a moderator's decisions are in ``moderation``).

Every function here validates first and raises ``ValidationError`` with one of the
messages below (so nothing changes on refusal), then writes in one transaction. Rating a
confirmed match is ``ratings.services.rating_apply_match``, called in the same
transaction as the confirmation.

On PostgreSQL a report, a queue match's result and its confirmation run as hand-written
statements (``_report_in_two_statements``, ``ladder.matches.answers``); the ORM code here
is their twin, which other databases run and the tests run on PostgreSQL too.
``ladder.matches.store`` chooses between the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from accounts.models import User
from accounts.roles import is_moderator
from ladder.fields.answers import Answer, game_length, write_answers
from ladder.matches import answers as two_statements
from ladder.matches import notices, sql, states, store
from ladder.matches.checks import (
    OWN_REPORT,
    REPORTER_NOT_IN_MATCH,
    SideInput,
    answerable,
    check_members,
    check_placements,
    check_result_reportable,
    check_sides,
    lock_members,
    locked,
    side_of,
)
from ladder.models import (
    CancelReason,
    Confirmation,
    Ladder,
    Match,
    MatchSide,
    MatchStatus,
    Participant,
    SideAnswer,
)
from ladder.moderation import fair_play, watch
from ladder.moderation.suspensions import refuse_suspended_players
from ladder.permissions import is_trusted_everywhere, is_trusted_reporter
from notifications.models import Kind, Notification
from notifications.services import forget_counts, mail_soon
from ratings import hooks
from ratings.history import change_values
from ratings.models import ChangeKind, RatingChange
from ratings.services import RatedMatch, rating_apply_locked, rating_apply_match, rating_compute
from webhooks.services import subscribed_events

FUTURE_TOLERANCE = timedelta(minutes=1)
# A report after play is a duplicate of a live match with the same players and result played in the same minute.
DUPLICATE_WINDOW = timedelta(minutes=1)

PLAYED_IN_FUTURE = "The played-at time is in the future."
DUPLICATE_REPORT = (
    "This result was already reported (match %(match)d): the same players, the same result, played in the same "
    "minute. If this was another game, give the time it was played."
)
REASON_REQUIRED = "Give a reason; it is kept with the match."
ALREADY_VOID = "This match is already void."
CANNOT_CONFIRM = "Only a match awaiting confirmation or disputed can be confirmed, and this one is %(status)s."


def duplicate_window(played_at: datetime) -> tuple[datetime, datetime]:
    """The minute of ``played_at``, half open: a report of the same players and result in it is a duplicate."""
    start = played_at.replace(second=0, microsecond=0)
    return start, start + DUPLICATE_WINDOW


def _find_duplicate(ladder: Ladder, sides: Sequence[SideInput], played_at: datetime) -> Match | None:
    """A live match of the same players with the same result played in the minute of ``played_at``."""
    placed = sorted((p.pk, side.placement) for side in sides for p in side.players)
    low, high = duplicate_window(played_at)
    candidates = (
        Participant.objects.filter(
            match__ladder=ladder,
            match__played_at__gte=low,
            match__played_at__lt=high,
            match__status__in=[MatchStatus.PENDING, MatchStatus.CONFIRMED, MatchStatus.DISPUTED],
            match__in=Participant.objects.filter(player_id=placed[0][0]).values("match_id"),
        )
        .order_by()
        .values_list("match_id", "player_id", "side__placement")
    )
    found: dict[int, list[tuple[int, int | None]]] = {}
    for match_id, player_id, placement in candidates:
        found.setdefault(match_id, []).append((player_id, placement))
    for match_id, match_placed in sorted(found.items()):
        if sorted(match_placed) == placed:
            return Match(pk=match_id)
    return None


@dataclass(frozen=True, slots=True)
class ReportedMatch:
    """A match ``match_report_with_rows`` recorded, and the rows it wrote when it knows them.

    The report statement (PostgreSQL) returns only ids, so the service gives back
    ``sides`` (by index, each with its players in report order) and ``changes`` (empty
    unless rated) as it wrote them: a response shows the new match without reading it
    back (``selectors.written_match_summary``). Through the ORM ``sides`` is None: read
    the match back.
    """

    match: Match
    sides: list[tuple[MatchSide, list[User]]] | None = None
    changes: list[RatingChange] = field(default_factory=list)


def match_report(
    *,
    ladder: Ladder,
    reporter: User,
    sides: Sequence[SideInput],
    played_at: datetime | None = None,
    now: datetime | None = None,
    answers: Sequence[Answer] = (),
) -> Match:
    """Record a result. A participant's report awaits the other side; a moderator's or a
    trusted reporter's is confirmed and rated at once. ``answers``: its match fields, checked
    (``ladder.fields.answers.clean_answers``), written before the match is rated.
    """
    report = match_report_with_rows(
        ladder=ladder, reporter=reporter, sides=sides, played_at=played_at, now=now, answers=answers
    )
    return report.match


def match_report_with_rows(
    *,
    ladder: Ladder,
    reporter: User,
    sides: Sequence[SideInput],
    played_at: datetime | None = None,
    now: datetime | None = None,
    answers: Sequence[Answer] = (),
    savepoint: bool = True,
) -> ReportedMatch:
    """``match_report``, with the rows written when they are known (see ``ReportedMatch``).

    On PostgreSQL the report takes two statements (``ladder.matches.sql``); ``_report_through_orm``
    is its twin, which other databases run (``ladder.matches.store`` chooses). Called in a
    transaction of the caller's, it runs in a savepoint, so the caller can go on after a
    refused report; a caller that never goes on (the API's report under an ``Idempotency-Key``)
    passes ``savepoint=False`` and saves PostgreSQL the subtransaction.
    """
    now = now or timezone.now()
    played_at = played_at or now
    if played_at > now + FUTURE_TOLERANCE:
        raise ValidationError(PLAYED_IN_FUTURE, code="played_in_future")
    check_sides(ladder, sides)
    report = store.match_report(in_two_statements=_report_in_two_statements, orm=_report_through_orm)
    return report(
        ladder=ladder,
        reporter=reporter,
        sides=sides,
        played_at=played_at,
        now=now,
        answers=answers,
        savepoint=savepoint,
    )


def _report_through_orm(
    *,
    ladder: Ladder,
    reporter: User,
    sides: Sequence[SideInput],
    played_at: datetime,
    now: datetime,
    answers: Sequence[Answer] = (),
    savepoint: bool = True,
) -> ReportedMatch:
    """``match_report`` on other databases: the ORM twin of ``_report_in_two_statements``."""
    players = [p for side in sides for p in side.players]
    trusted = is_moderator(reporter) or is_trusted_reporter(reporter, ladder)
    if not trusted and reporter.pk not in {p.pk for p in players}:
        raise ValidationError(REPORTER_NOT_IN_MATCH, code="reporter_not_in_match")
    with transaction.atomic(savepoint=savepoint):
        rows = lock_members(ladder, players, played_at)
        hold = None
        if not trusted:
            refuse_suspended_players(ladder=ladder, player_ids=[p.pk for p in players], reporter=reporter, now=now)
            hold = fair_play.check_report(ladder=ladder, reporter=reporter, sides=sides, played_at=played_at, now=now)
        duplicate = _find_duplicate(ladder, sides, played_at)
        if duplicate is not None:
            raise ValidationError(DUPLICATE_REPORT, code="duplicate", params={"match": duplicate.pk})
        match = Match(
            ladder=ladder,
            played_at=played_at,
            rated_at=now if trusted else None,
            held_for_review=hold is not None,
            review_evidence=hold.evidence if hold else None,
        )
        states.report(match, reporter=reporter, now=now, trusted=trusted)
        match.save(force_insert=True)
        reporter_side = _reporter_side(sides, reporter)
        match_sides = MatchSide.objects.bulk_create(
            MatchSide(
                match=match,
                index=index,
                placement=side.placement,
                answer=SideAnswer.REPORTED if index == reporter_side else "",
                answered_by=reporter if index == reporter_side else None,
                answered_at=now if index == reporter_side else None,
            )
            for index, side in enumerate(sides)
        )
        Participant.objects.bulk_create(
            Participant(match=match, side=match_side, player=player)
            for match_side, side in zip(match_sides, sides, strict=True)
            for player in side.players
        )
        write_answers(match, answers)
        lineup = _lineup(sides)
        if trusted:
            before = notices.watch_ranks(ladder, now)
            rating_apply_locked(
                match=match,
                layout=[[player.pk for player in side.players] for side in sides],
                placements=[side.placement for side in sides],
                rows={player.pk: rows[player.pk] for player in players},
            )
            notices.tell_rated(
                match_id=match.pk, ladder=ladder, lineup=lineup, changes=_changes_of(match.pk), now=now, before=before
            )
            hooks.matches_rated(ladder.pk, [match.pk])  # last: after everything the report wrote
        else:
            watch.hold_if_watched(
                ladder=ladder, match=match, sides=_watched(sides), length=game_length(answers), now=now
            )
            notices.tell_reported(
                match_id=match.pk,
                ladder=ladder,
                lineup=lineup,
                reporter=reporter.username,
                answered=[] if reporter_side is None else [reporter_side],
                now=now,
            )
        return ReportedMatch(match)


def _changes_of(match_id: int) -> dict[int, tuple[float, float]]:
    """Each player's rating change in ``match_id``'s rating: id → (change, rating after)."""
    rows = RatingChange.objects.filter(match_id=match_id, kind=ChangeKind.MATCH).order_by("-event_id")
    changes: dict[int, tuple[float, float]] = {}
    for player, before, after in rows.values_list("player_id", "rating_before", "rating_after"):
        changes.setdefault(player, (after - before, after))
    return changes


def _lineup(sides: Sequence[SideInput]) -> notices.Lineup:
    """Who a report says played, as the notifications name them."""
    return notices.Lineup([[(p.pk, p.username) for p in side.players] for side in sides], [s.placement for s in sides])


def _watched(sides: Sequence[SideInput]) -> list[tuple[list[int], int]]:
    """A report's sides as the fair-play watch reads them: players' ids and placement."""
    return [([p.pk for p in side.players], side.placement) for side in sides]


def _reporter_side(sides: Sequence[SideInput], reporter: User) -> int | None:
    return next((index for index, side in enumerate(sides) if any(p.pk == reporter.pk for p in side.players)), None)


def _report_in_two_statements(
    *,
    ladder: Ladder,
    reporter: User,
    sides: Sequence[SideInput],
    played_at: datetime,
    now: datetime,
    answers: Sequence[Answer] = (),
    savepoint: bool = True,
) -> ReportedMatch:
    """``match_report`` on PostgreSQL: the same checks and rows in two statements (``ladder.matches.sql``)."""
    players = [p for side in sides for p in side.players]
    moderator = is_moderator(reporter)
    trusted = moderator or is_trusted_everywhere(reporter)
    layout = [[player.pk for player in side.players] for side in sides]
    with transaction.atomic(savepoint=savepoint):
        # The watch's reads come with the lock for a report it will see (not a trusted reporter's).
        members, listed, reads = sql.lock_members(
            ladder, [p.pk for p in players], reporter.pk, now=None if trusted else now
        )
        trusted = trusted or (reporter.is_active and listed)
        if not trusted and reporter.pk not in {p.pk for p in players}:
            raise ValidationError(REPORTER_NOT_IN_MATCH, code="reporter_not_in_match")
        check_members(ladder, players, members, played_at)
        hold = None
        if not trusted:
            refuse_suspended_players(ladder=ladder, player_ids=[p.pk for p in players], reporter=reporter, now=now)
            hold = fair_play.check_report(ladder=ladder, reporter=reporter, sides=sides, played_at=played_at, now=now)
        how = (Confirmation.MODERATOR if moderator else Confirmation.TRUSTED) if trusted else ""
        reporter_side = _reporter_side(sides, reporter)
        rated = None
        # The webhooks' events are read once: none wanted (the usual case), neither the ranks
        # before nor the events after are looked at (as ``answers._confirm``).
        hooked = trusted and bool(subscribed_events(ladder.pk))
        before = notices.watch_ranks(ladder, now) if hooked else None
        if trusted:
            rated = rating_compute(
                ladder=ladder,
                layout=layout,
                placements=[side.placement for side in sides],
                played_at=played_at,
                standings={player: member.standing for player, member in members.items()},
            )
        status = states.report_status(trusted=trusted)
        lineup = _lineup(sides)
        changes = {}
        if rated is not None:
            values = [change_values(row) for row in rated.changes]
            changes = {v["player_id"]: (v["rating_after"] - v["rating_before"], v["rating_after"]) for v in values}
            batch = notices.rated_batch(ladder=ladder, lineup=lineup, changes=changes)
        else:
            answered = [] if reporter_side is None else [reporter_side]
            batch = notices.reported_batch(
                ladder=ladder, lineup=lineup, reporter=reporter.username, answered=answered, now=now
            )
        match_id, duplicate_id, mails = sql.record_match(
            ladder=ladder,
            status=status,
            played_at=played_at,
            reporter_id=reporter.pk,
            now=now,
            confirmation=how,
            duplicate_window=duplicate_window(played_at),
            layout=layout,
            sides=[
                sql.SideRow(
                    side.placement,
                    SideAnswer.REPORTED if index == reporter_side else "",
                    reporter.pk if index == reporter_side else None,
                    now if index == reporter_side else None,
                )
                for index, side in enumerate(sides)
            ],
            rated=rated,
            members=members,
            notices=batch,
            composed=not answers,  # the statistics count a match without game details in the statement
        )
        if match_id is None:  # nothing written: ``duplicate_id`` is the live match of the same players
            raise ValidationError(DUPLICATE_REPORT, code="duplicate", params={"match": duplicate_id})
        # The statement rated the match already; in this transaction, before anything reads the rating.
        write_answers(match_id, answers)
        if hold is not None:
            Match.objects.filter(pk=match_id).update(held_for_review=True, review_evidence=hold.evidence)
        watched = None
        if not trusted:
            written = Match(pk=match_id, ladder=ladder, review_evidence=hold.evidence if hold else None)
            watched = watch.hold_if_watched(
                ladder=ladder, match=written, sides=_watched(sides), length=game_length(answers), now=now, reads=reads
            )
            if watched is not None:
                hold = fair_play.Hold(reasons=watched.reasons, evidence=written.review_evidence or {})
        forget_counts(batch.data)
        if mails:
            mail_soon()
        if rated is not None:
            if hooked:
                notices.emit_rated(
                    match_id=match_id, ladder=ladder, lineup=lineup, changes=changes, now=now, before=before
                )
            hooks.matches_rated(ladder.pk, [match_id], composed=not answers)  # last: after everything it wrote
    match = Match(
        pk=match_id,
        ladder=ladder,
        status=status,
        played_at=played_at,
        reported_by=reporter,
        reported_at=now,
        confirmation=how,
        confirmed_at=now if trusted else None,
        rated_at=now if trusted else None,
        created_at=now,
        held_for_review=hold is not None,
        held_for_moderator=watched is not None,
        review_evidence=hold.evidence if hold else None,
    )
    return _as_written(match, sides, reporter_side, reporter, now, rated)


def _as_written(
    match: Match,
    sides: Sequence[SideInput],
    reporter_side: int | None,
    reporter: User,
    now: datetime,
    rated: RatedMatch | None,
) -> ReportedMatch:
    """``match`` with its sides (and players) and its rating changes, holding the values the statement inserted."""
    match_sides = []
    for index, side in enumerate(sides):
        answered = index == reporter_side
        row = MatchSide(
            match=match,
            index=index,
            placement=side.placement,
            answer=SideAnswer.REPORTED if answered else "",
            answered_by=reporter if answered else None,
            answered_at=now if answered else None,
        )
        match_sides.append((row, list(side.players)))
    changes = []
    if rated is not None:
        players = {player.pk: player for side in sides for player in side.players}
        for change in rated.changes:
            values = change_values(change)
            changes.append(RatingChange(match=match, player=players[values.pop("player_id")], **values))
    return ReportedMatch(match, match_sides, changes)


def match_report_result(
    *,
    match: Match,
    reporter: User,
    placements: Sequence[int],
    now: datetime | None = None,
    series: bool = False,
    answers: Sequence[Answer] = (),
) -> Match:
    """The result of a match the queue scheduled: a player of it (or a moderator or trusted
    reporter) gives each side's placement; the other side then confirms, as for any report.

    On a ladder whose queue matches are series, only ``ladder.matches.series`` reports one
    (``series=True``): a single result would skip the series' games.
    """
    now = now or timezone.now()
    report = store.match_report_result(in_two_statements=two_statements.report_result, orm=_report_result_through_orm)
    return report(match=match, reporter=reporter, placements=placements, now=now, series=series, answers=answers)


def _report_result_through_orm(
    *,
    match: Match,
    reporter: User,
    placements: Sequence[int],
    now: datetime,
    series: bool,
    answers: Sequence[Answer] = (),
) -> Match:
    """``match_report_result`` on other databases: the ORM twin of ``ladder.matches.answers.report_result``."""
    with transaction.atomic():
        match = locked(match)
        check_result_reportable(match, series=series)
        ladder = match.ladder
        sides = list(match.sides.order_by("index").prefetch_related("participants__player"))
        check_placements(ladder, placements, sides=len(sides))
        trusted = is_moderator(reporter) or is_trusted_reporter(reporter, ladder)
        players = [p.player for side in sides for p in side.participants.all()]
        reporter_side = next(
            (side for side in sides if any(p.player_id == reporter.pk for p in side.participants.all())), None
        )
        if reporter_side is None and not trusted:
            raise ValidationError(REPORTER_NOT_IN_MATCH, code="reporter_not_in_match")
        if not trusted:
            refuse_suspended_players(ladder=ladder, player_ids=[p.pk for p in players], reporter=reporter, now=now)
        lock_members(ladder, players)
        for side, placement in zip(sides, placements, strict=True):
            side.placement = placement
            if side is reporter_side:
                side.answer, side.answered_by, side.answered_at = SideAnswer.REPORTED, reporter, now
        MatchSide.objects.bulk_update(sides, ["placement", "answer", "answered_by", "answered_at"])
        match.save(update_fields=states.report_result(match, reporter=reporter, now=now))
        write_answers(match, answers)
        if trusted:
            how = Confirmation.MODERATOR if is_moderator(reporter) else Confirmation.TRUSTED
            confirm_and_rate(match, how, now, transition=states.CONFIRM_TRUSTED)
        else:
            watched = [([p.player_id for p in side.participants.all()], side.placement or 0) for side in sides]
            watch.hold_if_watched(ladder=ladder, match=match, sides=watched, length=game_length(answers), now=now)
            notices.tell_reported(
                match_id=match.pk,
                ladder=ladder,
                lineup=notices.lineup_of(match),
                reporter=reporter.username,
                answered=[] if reporter_side is None else [reporter_side.index],
                now=now,
            )
        return match


def _place_forfeit(match: Match, winner: int) -> list[MatchSide]:
    """Placements of a no-show: side ``winner`` first, every other side second."""
    sides = list(match.sides.order_by("index"))
    for side in sides:
        side.placement = 1 if side.index == winner else 2
    MatchSide.objects.bulk_update(sides, ["placement"])
    return sides


def match_forfeit(*, match: Match, winner: int, now: datetime) -> None:
    """A no-show claim nobody answered (``match`` locked): side ``winner`` wins by forfeit.

    Rated like any confirmed result when the ladder rates forfeits (a rating event, so
    replays include it); otherwise the result is kept and the match is cancelled, unrated.
    """
    _place_forfeit(match, winner)
    match.claim_deadline = None
    match.save(update_fields=["claim_deadline"])
    if match.ladder.forfeits_rated:
        confirm_and_rate(match, Confirmation.FORFEIT, now)
        return
    match.save(update_fields=states.cancel(match, CancelReason.FORFEIT, now))


def match_contest_claim(*, match: Match, side: MatchSide, user: User, reason: str, now: datetime) -> None:
    """The claimed side says it did play (``match`` locked): the claim, as a forfeit result, goes to the moderators."""
    claimer = match.sides.filter(no_show_claimed_at__isnull=False).values_list("index", flat=True).first()
    _place_forfeit(match, claimer if claimer is not None else 1 - side.index)
    match.claim_deadline = None
    match.save(update_fields=["claim_deadline"])
    _dispute(match, side, user, reason, now, contest=True)


def confirm_and_rate(
    match: Match, how: Confirmation, now: datetime, *, transition: states.Transition | None = None
) -> None:
    """Confirm and rate ``match`` (locked), and tell its players and the webhooks."""
    match.save(update_fields=states.confirm(match, how, now, transition=transition))
    before = notices.watch_ranks(match.ladder, now)
    if rating_apply_match(match=match, now=now) is not None:
        notices.tell_rated(
            match_id=match.pk,
            ladder=match.ladder,
            lineup=notices.lineup_of(match),
            changes=_changes_of(match.pk),
            now=now,
            before=before,
        )


def match_confirm(*, match: Match, user: User, now: datetime | None = None) -> Match:
    """A player of another side confirms; once every other side has, the match is rated."""
    now = now or timezone.now()
    confirm = store.match_confirm(in_two_statements=two_statements.confirm, orm=_confirm_through_orm)
    return confirm(match=match, user=user, now=now)


def _confirm_through_orm(*, match: Match, user: User, now: datetime) -> Match:
    """``match_confirm`` on other databases: the ORM twin of ``ladder.matches.answers.confirm``."""
    with transaction.atomic():
        match = locked(match)
        side = answerable(match, user)
        side.answer = SideAnswer.CONFIRMED
        side.answered_by = user
        side.answered_at = now
        side.save(update_fields=["answer", "answered_by", "answered_at"])
        if not match.sides.filter(answer="").exists() and not match.held_for_moderator:
            confirm_and_rate(match, Confirmation.PARTICIPANT, now)
        answered = match.participants.filter(side=side).values_list("player_id", flat=True)
        notices.answered_read(match=match, player_ids=answered, now=now)
        return match


def match_dispute(*, match: Match, user: User, reason: str = "", now: datetime | None = None) -> Match:
    """A player of another side disputes the result; a moderator then decides."""
    now = now or timezone.now()
    with transaction.atomic():
        match = locked(match)
        _dispute(match, answerable(match, user), user, reason, now)
        return match


def _dispute(match: Match, side: MatchSide, user: User, reason: str, now: datetime, *, contest: bool = False) -> None:
    side.answer = SideAnswer.DISPUTED
    side.answered_by = user
    side.answered_at = now
    side.dispute_reason = reason.strip()
    side.save(update_fields=["answer", "answered_by", "answered_at", "dispute_reason"])
    match.save(update_fields=states.contest_claim(match) if contest else states.dispute(match))
    notices.answered_read(
        match=match, player_ids=match.participants.filter(side=side).values_list("player_id", flat=True), now=now
    )
    notices.tell_disputed(
        match=match,
        lineup=notices.lineup_of(match),
        side_index=side.index,
        by=user.username,
        reason=side.dispute_reason,
        now=now,
    )


def match_dispute_all_from(
    *, user: User, reporter: User, reason: str = "", ladder: Ladder | None = None, now: datetime | None = None
) -> list[Match]:
    """Dispute, in one go, every result ``reporter`` reported that ``user`` has yet to answer.

    For a player flooded with invented results: each becomes disputed, with the same reason,
    and waits for a moderator. Returns the disputed matches (none is no error); ``ladder``
    narrows it to one ladder.
    """
    now = now or timezone.now()
    if reporter.pk == user.pk:
        raise ValidationError(OWN_REPORT, code="own_report")
    pending = Match.objects.filter(
        status=MatchStatus.PENDING, reported_by=reporter, participants__player=user, participants__side__answer=""
    )
    if ladder is not None:
        pending = pending.filter(ladder=ladder)
    with transaction.atomic():
        ids = list(pending.order_by("pk").values_list("pk", flat=True))
        matches = list(
            Match.objects.select_for_update(of=("self",))
            .filter(pk__in=ids, status=MatchStatus.PENDING)
            .select_related("ladder")
            .order_by("pk")
        )
        disputed = []
        for match in matches:
            side = side_of(match, user)
            if side.answer:
                continue
            _dispute(match, side, user, reason, now)
            disputed.append(match)
        return disputed


def match_confirm_overdue(*, now: datetime | None = None) -> int:
    """Confirm and rate every result left unanswered past its ladder's window; returns how many.

    Each match is claimed with ``SKIP LOCKED`` in its own transaction, so two sweeps (or a
    sweep and a player's answer) never handle the same match twice.
    """
    now = now or timezone.now()
    confirmed = 0
    for ladder in Ladder.objects.filter(matches__status=MatchStatus.PENDING).distinct():
        deadline = now - timedelta(hours=ladder.confirmation_hours)
        ids = list(
            Match.objects.filter(
                ladder=ladder, status=MatchStatus.PENDING, reported_at__lte=deadline, held_for_review=False
            )
            .order_by("reported_at", "pk")
            .values_list("pk", flat=True)
        )
        for pk in ids:
            with transaction.atomic():
                match = (
                    Match.objects.select_for_update(skip_locked=True, of=("self",))
                    .filter(pk=pk, status=MatchStatus.PENDING, held_for_review=False)
                    .select_related("ladder")
                    .first()
                )
                if match is None:
                    continue
                confirm_and_rate(match, Confirmation.AUTOMATIC, now)
                confirmed += 1
    return confirmed


def match_remind_unanswered(*, now: datetime | None = None) -> int:
    """Remind the players who have yet to answer a result about two hours before it confirms
    itself (``notices.REMINDER_BEFORE``); each match once. Returns how many were reminded.

    A ladder whose window is that short or shorter gets no reminder: the first notification
    gave the deadline already.
    """
    now = now or timezone.now()
    candidates = []
    reminded = Notification.objects.filter(match_id=OuterRef("pk"), kind=Kind.CONFIRM_REMINDER)
    for ladder in Ladder.objects.filter(matches__status=MatchStatus.PENDING).distinct():
        hours = timedelta(hours=ladder.confirmation_hours)
        if hours <= notices.REMINDER_BEFORE:
            continue
        due = (
            Match.objects.filter(
                ladder=ladder,
                status=MatchStatus.PENDING,
                held_for_review=False,
                reported_at__lte=now - hours + notices.REMINDER_BEFORE,
                reported_at__gt=now - hours,
            )
            .exclude(Exists(reminded))
            .select_related("ladder", "reported_by")
            .order_by("reported_at", "pk")
        )
        for match in due:
            waiting = list(match.sides.filter(answer="").values_list("index", flat=True))
            candidates.append((match, notices.lineup_of(match), waiting))
    with transaction.atomic():
        return notices.remind_due(now=now, candidates=candidates)
