"""Reports about players (docs/rules.md §15, "Reports about players").

A signed-in player reports another from the player's page in a ladder or from a match page:
a reason, what happened, and the match if there is one. A player has one open report about
another at a time and files at most ``REPORTS_PER_DAY`` a day. The fair-play watch files
its own reports (``ladder.moderation.watch``) into the same table.

The moderation desk lists the open reports as cases, one per player and ladder, highest
score first: how many players reported them, how many reports the watch filed, how many of
their results wait for a moderator, and one more for each reason two reports agree on. A
moderator decides a case at once: every open report about the player in that ladder is
closed as acted on or dismissed, with a note the moderators keep, and each reporter is told
the outcome in general terms.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from accounts.models import User
from audit.models import Action
from audit.services import audit_record
from ladder.models import Ladder, Match, MatchStatus, Participant, PlayerReport, ReportReason, ReportStatus
from notifications.models import Kind, Notification
from notifications.services import notify
from ratings.models import PlayerRating

REPORTS_PER_DAY = 5
QUEUE_SIZE = 50  # cases on the desk; the rest are in the admin
QUEUE_READ = 2000  # open reports read to build the cases, newest first

SELF = "You cannot report yourself."
NOT_IN_LADDER = "{player} is not a member of {ladder}."
NOT_THEIR_MATCH = "Match {pk} is not a match {player} played in {ladder}."
ALREADY_OPEN = (
    "You already have an open report about {player}. A moderator will look at it, and you will be told the outcome."
)
TOO_MANY = f"You have sent {REPORTS_PER_DAY} reports in the last 24 hours, the most a day. Try again tomorrow."
NONE_OPEN = "No open reports about {player} in {ladder}: another moderator has decided them."
NOTE_NEEDED = "Write a note for the other moderators: what you found and what you did."


def player_report_file(
    *,
    ladder: Ladder,
    player: User,
    reporter: User,
    reason: str,
    text: str,
    match: Match | None = None,
    now: datetime,
) -> PlayerReport:
    """Files ``reporter``'s report about ``player`` in ``ladder``; ValidationError says why not."""
    if reporter.pk == player.pk:
        raise ValidationError(SELF)
    if reason not in ReportReason.values:
        raise ValidationError({"reason": f"Choose one of: {', '.join(ReportReason.values)}."})
    if not PlayerRating.objects.filter(ladder=ladder, player=player).exists():
        raise ValidationError(NOT_IN_LADDER.format(player=player.username, ladder=ladder.name))
    if match is not None and not (
        match.ladder_id == ladder.pk and Participant.objects.filter(match=match, player=player).exists()
    ):
        wrong = NOT_THEIR_MATCH.format(pk=match.pk, player=player.username, ladder=ladder.name)
        raise ValidationError({"match": wrong})
    already = ValidationError(ALREADY_OPEN.format(player=player.username))
    try:
        with transaction.atomic():
            # The reporter's row serialises their reports, so the day's count holds when two race.
            User.objects.select_for_update().filter(pk=reporter.pk).first()
            if PlayerReport.objects.filter(reporter=reporter, created_at__gt=now - timedelta(days=1)).count() >= (
                REPORTS_PER_DAY
            ):
                raise ValidationError(TOO_MANY)
            if PlayerReport.objects.filter(reporter=reporter, player=player, status=ReportStatus.OPEN).exists():
                raise already
            report = PlayerReport.objects.create(
                ladder=ladder, player=player, reporter=reporter, reason=reason, text=text.strip(), created_at=now
            )
            if match is not None:
                report.matches.add(match)
    except IntegrityError:  # player_report_one_open: the same report sent twice at once
        raise already from None
    return report


@dataclass
class Case:
    """The open reports about one player in one ladder, as the desk lists them."""

    ladder: Ladder
    player: User
    reports: list[PlayerReport] = field(default_factory=list)
    held: int = 0  # their results that wait for a moderator

    @property
    def reporters(self) -> int:
        return len({report.reporter_id for report in self.reports if report.reporter_id is not None})

    @property
    def automatic(self) -> int:
        return sum(1 for report in self.reports if report.reporter_id is None)

    @property
    def reasons(self) -> list[tuple[str, int]]:
        """Each reason named, with how many reports name it, most first."""
        counted = Counter(report.get_reason_display() for report in self.reports)
        return counted.most_common()

    @property
    def score(self) -> int:
        agreeing = sum(1 for _, count in Counter(r.reason for r in self.reports).items() if count >= 2)
        return self.reporters + self.automatic + self.held + agreeing

    @property
    def since(self) -> datetime:
        return min(report.created_at for report in self.reports)


def report_queue(*, limit: int = QUEUE_SIZE) -> tuple[list[Case], int]:
    """The open cases, highest score first (the oldest first among equals), and how many there are."""
    reports = list(
        PlayerReport.objects.filter(status=ReportStatus.OPEN)
        .select_related("ladder", "player", "reporter")
        .order_by("-created_at", "-pk")[:QUEUE_READ]
    )
    cases: dict[tuple[int, int], Case] = {}
    for report in reports:
        key = (report.ladder_id, report.player_id)
        if key not in cases:
            cases[key] = Case(ladder=report.ladder, player=report.player)
        cases[key].reports.append(report)
    if cases:
        held = Counter(
            Participant.objects.filter(
                player_id__in={player for _, player in cases},
                match__ladder_id__in={ladder for ladder, _ in cases},
                match__status=MatchStatus.PENDING,
                match__held_for_review=True,
            ).values_list("match__ladder_id", "player_id")
        )
        for key, case in cases.items():
            case.held = held.get(key, 0)
    ordered = sorted(cases.values(), key=lambda case: (-case.score, case.since))
    return ordered[:limit], len(ordered)


def player_case(*, ladder: Ladder, player: User) -> tuple[Case, list[PlayerReport]]:
    """The open case about ``player`` in ``ladder`` (possibly empty) and their last decided reports."""
    case = Case(
        ladder=ladder,
        player=player,
        reports=list(
            PlayerReport.objects.filter(ladder=ladder, player=player, status=ReportStatus.OPEN)
            .select_related("reporter")
            .prefetch_related("matches")
            .order_by("created_at", "pk")
        ),
        held=Participant.objects.filter(
            player=player, match__ladder=ladder, match__status=MatchStatus.PENDING, match__held_for_review=True
        ).count(),
    )
    decided = list(
        PlayerReport.objects.filter(ladder=ladder, player=player)
        .exclude(status=ReportStatus.OPEN)
        .select_related("reporter", "decided_by")
        .order_by("-decided_at", "-pk")[:10]
    )
    return case, decided


def player_reports_decide(
    *, ladder: Ladder, player: User, moderator: User, acted: bool, note: str, now: datetime
) -> int:
    """Closes every open report about ``player`` in ``ladder``; tells each reporter; returns how many."""
    with transaction.atomic():
        chosen = PlayerReport.objects.filter(ladder=ladder, player=player, status=ReportStatus.OPEN)
        closed = _close(chosen, moderator=moderator, acted=acted, note=note, now=now)
    if not closed:
        raise ValidationError(NONE_OPEN.format(player=player.username, ladder=ladder.name))
    return closed


def player_report_decide(*, report: PlayerReport, moderator: User, acted: bool, note: str, now: datetime) -> None:
    """Closes one open report (the admin's way) and tells its reporter."""
    with transaction.atomic():
        if not _close(
            PlayerReport.objects.filter(pk=report.pk, status=ReportStatus.OPEN),
            moderator=moderator,
            acted=acted,
            note=note,
            now=now,
        ):
            raise ValidationError(NONE_OPEN.format(player=report.player.username, ladder=report.ladder.name))


def _close(chosen: QuerySet[PlayerReport], *, moderator: User, acted: bool, note: str, now: datetime) -> int:
    """Closes the open reports of ``chosen`` (locked), each reporter told once; how many were closed."""
    note = note.strip()
    if not note:
        raise ValidationError({"note": NOTE_NEEDED})
    reports = list(chosen.select_for_update().select_related("ladder", "player").order_by("pk"))
    if not reports:
        return 0
    status = ReportStatus.ACTED if acted else ReportStatus.DISMISSED
    PlayerReport.objects.filter(pk__in=[report.pk for report in reports]).update(
        status=status, decided_by=moderator, decided_at=now, decision=note[:500]
    )
    told: set[tuple[int | None, int, int]] = set()
    for report in reports:
        who = (report.reporter_id, report.ladder_id, report.player_id)
        if report.reporter_id is None or who in told:
            continue
        told.add(who)
        notify(
            Kind.REPORT_OUTCOME,
            [report.reporter_id],
            key=f"report-outcome:{report.pk}",
            ladder_id=report.ladder_id,
            data={"player": report.player.username, "ladder": report.ladder.name, "acted": acted},
            now=now,
        )
    cases = Counter((report.ladder, report.player) for report in reports)
    for (ladder, player), count in cases.items():
        audit_record(
            actor=moderator,
            action=Action.REPORTS_DECIDE,
            subject=player,
            ladder=ladder,
            target=f"{count} report{'' if count == 1 else 's'}",
            reason=note,
            data={"outcome": str(status)},
            at=now,
        )
    return len(reports)


@dataclass(frozen=True, slots=True)
class OwnFairPlay:
    """What fair play says to a player about themselves: results held, warnings, their own reports."""

    held: list[Match]
    warnings: list[Notification]
    reports_made: list[PlayerReport]


def own_fair_play(*, player: User, limit: int = 50) -> OwnFairPlay:
    """``player``'s held results, fair-play warnings and reports about others, newest first.

    Reports about the player themselves are the moderators' business and are not included."""
    held = list(
        Match.objects.filter(participants__player=player, status=MatchStatus.PENDING, held_for_review=True)
        .select_related("ladder")
        .distinct()
        .order_by("-reported_at", "-pk")[:limit]
    )
    warnings = list(
        Notification.objects.filter(recipient=player, kind=Kind.FAIR_PLAY)
        .select_related("ladder")
        .order_by("-created_at", "-pk")[:limit]
    )
    made = list(
        PlayerReport.objects.filter(reporter=player)
        .select_related("player", "ladder")
        .order_by("-created_at", "-pk")[:limit]
    )
    return OwnFairPlay(held=held, warnings=warnings, reports_made=made)
